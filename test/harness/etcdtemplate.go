package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// An API server that creates the 30 CRDs of deploy/crds spends about 12 s
// of CPU on them (creating each, then the status writes that name and
// establish it, each rewriting the whole schema), and the test process a
// few more sending them. One that starts on an etcd which already holds
// them established spends about 3 s serving them. So a control plane
// starts from a copy of an etcd data directory in which an API server once
// established the CRDs: the template, built once per machine for each
// content of deploy/crds and each Kubernetes build, and kept in the cache.

// etcdTemplates is where the templates are kept, one directory per key.
func etcdTemplates() string { return filepath.Join(CacheDir(), "envtest-etcd") }

// templateFormat changes when what a template holds does, for the same
// CRD files.
const templateFormat = 2

// templateKey is the hash of the CRD files of deploy/crds and of the
// template's format; etcdTemplate adds the Kubernetes binaries'.
var templateKey = sync.OnceValues(func() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	files, err := filepath.Glob(filepath.Join(root, "deploy", "crds", "*.yaml"))
	if err != nil {
		return "", fmt.Errorf("listing deploy/crds: %w", err)
	}
	if len(files) == 0 {
		return "", errors.New("no CRD files in deploy/crds")
	}
	slices.Sort(files)
	h := sha256.New()
	fmt.Fprintf(h, "template %d\n", templateFormat)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
})

// templateMu serializes the template's build within a process; processes
// that build at once each build, and the first to finish keeps its own.
var templateMu sync.Mutex

// etcdTemplate returns the template's directory for assets, building it
// when the cache lacks it.
func etcdTemplate(assets string) (string, error) {
	key, err := templateKey()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(assets))
	dir := filepath.Join(etcdTemplates(), key+"-"+hex.EncodeToString(sum[:4]))
	templateMu.Lock()
	defer templateMu.Unlock()
	if _, err := os.Stat(filepath.Join(dir, "member", "snap", "db")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(etcdTemplates(), 0o700); err != nil {
		return "", err
	}
	build, err := os.MkdirTemp(etcdTemplates(), "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(build)
	data := filepath.Join(build, "etcd")
	if err := os.Mkdir(data, 0o700); err != nil {
		return "", err
	}
	crds, err := crdCopies()
	if err != nil {
		return "", err
	}
	convertNothing(crds)
	env := &envtest.Environment{
		CRDs:                     crds,
		CRDInstallOptions:        envtest.CRDInstallOptions{MaxTime: crdInstallTimeout},
		ControlPlaneStartTimeout: controlPlaneStartTimeout,
		BinaryAssetsDirectory:    assets,
	}
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: data}
	if _, err := env.Start(); err != nil {
		return "", fmt.Errorf("building the etcd template: %w", errors.Join(err, env.Stop()))
	}
	// The API server first, so that etcd stops with everything written.
	if err := env.Stop(); err != nil {
		return "", fmt.Errorf("stopping the etcd template's control plane: %w", err)
	}
	// A rename onto the template another process kept first fails with
	// ENOTEMPTY (or EEXIST); that one serves.
	if err := os.Rename(data, dir); err != nil && !errors.Is(err, fs.ErrExist) && !errors.Is(err, syscall.ENOTEMPTY) {
		return "", fmt.Errorf("keeping the etcd template: %w", err)
	}
	pruneTemplates()
	return dir, nil
}

// keptTemplates is how many templates the cache keeps: the newest, for
// checkouts of other CRDs that test on the same machine.
const keptTemplates = 4

// pruneTemplates removes all but the newest keptTemplates templates and
// builds left by processes that died an hour ago or more.
func pruneTemplates() {
	entries, _ := os.ReadDir(etcdTemplates())
	type tpl struct {
		path string
		mod  time.Time
	}
	var tpls []tpl
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		p := filepath.Join(etcdTemplates(), e.Name())
		if strings.HasPrefix(e.Name(), "build-") {
			if time.Since(info.ModTime()) > time.Hour {
				_ = os.RemoveAll(p)
			}
			continue
		}
		tpls = append(tpls, tpl{p, info.ModTime()})
	}
	slices.SortFunc(tpls, func(a, b tpl) int { return b.mod.Compare(a.mod) })
	for i := keptTemplates; i < len(tpls); i++ {
		_ = os.RemoveAll(tpls[i].path)
	}
}

// copyTemplate copies the template to a new temporary directory for one
// etcd and returns it. etcd's preallocated next WAL file is left out, and
// the zeros of the preallocated WAL stay holes.
func copyTemplate(tpl string) (string, error) {
	dir, err := os.MkdirTemp("", "accelstack-etcd-")
	if err != nil {
		return "", err
	}
	data := filepath.Join(dir, "data")
	if out, err := exec.Command("cp", "-r", "--sparse=always", tpl, data).CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("copying the etcd template: %w: %s", err, out)
	}
	tmp, _ := filepath.Glob(filepath.Join(data, "member", "wal", "*.tmp"))
	for _, f := range tmp {
		_ = os.Remove(f)
	}
	return data, nil
}

// convertNothing clears the conversion of the template's CRDs: envtest
// points a CRD whose kind the scheme converts at the webhook server of the
// control plane that installs it, and drops any other's conversion webhook;
// the template's serves all, so each start points its own
// (pointConversions).
func convertNothing(crds []*apiextensionsv1.CustomResourceDefinition) {
	for _, crd := range crds {
		crd.Spec.Conversion = nil
	}
}

// pointConversions does for the CRDs of a control plane started on the
// template what envtest does for those it installs: each CRD whose kind
// scheme converts gets the conversion webhook of env's webhook server.
func pointConversions(ctx context.Context, env *envtest.Environment, c client.Client, scheme *runtime.Scheme) error {
	wh := env.WebhookInstallOptions
	if len(wh.LocalServingCAData) == 0 {
		return nil
	}
	crds, err := projectCRDs()
	if err != nil {
		return err
	}
	url := "https://" + net.JoinHostPort(wh.LocalServingHost, strconv.Itoa(wh.LocalServingPort)) + "/convert"
	for _, want := range crds {
		if want.Spec.PreserveUnknownFields || !convertible(scheme, schema.GroupKind{Group: want.Spec.Group, Kind: want.Spec.Names.Kind}) {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: want.Name}, crd); err != nil {
			return fmt.Errorf("reading CRD %s: %w", want.Name, err)
		}
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ConversionReviewVersions: []string{"v1", "v1beta1"},
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: wh.LocalServingCAData},
			},
		}
		if err := c.Update(ctx, crd); err != nil {
			return fmt.Errorf("pointing the conversion of CRD %s at the webhook server: %w", want.Name, err)
		}
	}
	return nil
}

// convertible tells whether scheme converts some version of gk to another
// (a hub and its spokes).
func convertible(scheme *runtime.Scheme, gk schema.GroupKind) bool {
	for gvk := range scheme.AllKnownTypes() {
		if gvk.GroupKind() != gk {
			continue
		}
		obj, err := scheme.New(gvk)
		if err != nil {
			continue
		}
		if ok, err := conversion.IsConvertible(scheme, obj); ok && err == nil {
			return true
		}
	}
	return false
}
