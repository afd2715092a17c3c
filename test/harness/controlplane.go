package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/accelstack/accelstack/pkg/manager"
)

// crdInstallTimeout bounds the wait for the CRDs of deploy/crds to be
// served.
const crdInstallTimeout = 2 * time.Minute

// controlPlaneStartTimeout bounds the start of etcd and of kube-apiserver
// each (envtest's default is 20 s); controlPlaneStartAttempts is how many
// control planes NewControlPlane starts before it gives up.
const (
	controlPlaneStartTimeout  = 2 * time.Minute
	controlPlaneStartAttempts = 3
)

// ControlPlane is a real etcd and kube-apiserver with the project's CRDs
// installed, and optionally a real kube-controller-manager.
type ControlPlane struct {
	// Env is the underlying envtest environment.
	Env *envtest.Environment
	// Config reaches the apiserver as a cluster admin.
	Config *rest.Config
	// Scheme knows the core Kubernetes types and every accelstack API.
	Scheme *runtime.Scheme
	// Client is a controller-runtime client over Config and Scheme.
	Client client.Client
	// KubeconfigPath is an admin kubeconfig file for tools such as kubectl.
	KubeconfigPath string

	// etcdData is etcd's copy of the template, removed at Stop.
	etcdData string
}

type controlPlaneOptions struct {
	controllerManager bool
	withoutCRDs       bool
}

// ControlPlaneOption changes what StartControlPlane starts.
type ControlPlaneOption func(*controlPlaneOptions)

// WithControllerManager also runs a real kube-controller-manager, for tests
// that need PV/PVC binding, garbage collection, Deployments or Jobs.
func WithControllerManager() ControlPlaneOption {
	return func(o *controlPlaneOptions) { o.controllerManager = true }
}

// StartControlPlane starts etcd and kube-apiserver with every CRD in
// deploy/crds installed and stops them when the test ends.
func StartControlPlane(t testing.TB, opts ...ControlPlaneOption) *ControlPlane {
	t.Helper()
	cp, err := NewControlPlane(opts...)
	if err != nil {
		t.Fatalf("starting control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping control plane: %v", err)
		}
	})
	if o := applyOptions(opts); o.controllerManager {
		cp.startControllerManager(t)
	}
	return cp
}

func applyOptions(opts []ControlPlaneOption) controlPlaneOptions {
	var o controlPlaneOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithoutCRDs starts the control plane without the project's CRDs, for tests
// that install them the way an admin does.
func WithoutCRDs() ControlPlaneOption {
	return func(o *controlPlaneOptions) { o.withoutCRDs = true }
}

// NewControlPlane starts etcd and kube-apiserver with the project's CRDs,
// for callers without a testing.TB (TestMain, the dev environment). The
// caller must call Stop. WithControllerManager is honoured only by
// StartControlPlane.
func NewControlPlane(opts ...ControlPlaneOption) (*ControlPlane, error) {
	assets, err := KubeAssets()
	if err != nil {
		return nil, err
	}
	scheme, err := manager.NewScheme()
	if err != nil {
		return nil, err
	}
	var (
		env *envtest.Environment
		cfg *rest.Config
	)
	withCRDs := !applyOptions(opts).withoutCRDs
	var etcdData string
	for attempt := 1; ; attempt++ {
		env = &envtest.Environment{
			ControlPlaneStartTimeout: controlPlaneStartTimeout,
			BinaryAssetsDirectory:    assets,
			Scheme:                   scheme,
		}
		if withCRDs {
			// etcd starts on a copy of the template, in which the CRDs
			// are established already (etcdtemplate.go).
			tpl, err := etcdTemplate(assets)
			if err == nil {
				etcdData, err = copyTemplate(tpl)
			}
			if err != nil {
				return nil, err
			}
			env.ControlPlane.Etcd = &envtest.Etcd{DataDir: etcdData}
		}
		if cfg, err = env.Start(); err == nil && withCRDs {
			err = startedOnTemplate(env, cfg, scheme)
		}
		if err == nil {
			break
		}
		err = fmt.Errorf("starting envtest with assets %s: %w", assets, errors.Join(err, env.Stop()))
		if etcdData != "" {
			_ = os.RemoveAll(filepath.Dir(etcdData))
		}
		// envtest gives the new API server a fixed 5 s to serve the
		// default namespace, which a loaded machine can miss: that
		// start, not the test, failed.
		if attempt == controlPlaneStartAttempts {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "harness: control plane start %d of %d failed, starting a new one: %v\n", attempt, controlPlaneStartAttempts, err)
	}
	cp := &ControlPlane{Env: env, Config: cfg, Scheme: scheme, etcdData: etcdData}
	if cp.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return nil, fmt.Errorf("creating client: %w", errors.Join(err, env.Stop()))
	}
	if cp.KubeconfigPath, err = cp.writeKubeconfig("admin", []string{"system:masters"}); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return cp, nil
}

// Stop stops the apiserver and etcd and removes their files.
func (cp *ControlPlane) Stop() error {
	err := cp.Env.Stop()
	if cp.etcdData != "" {
		_ = os.RemoveAll(filepath.Dir(cp.etcdData))
	}
	if cp.KubeconfigPath != "" {
		_ = os.RemoveAll(filepath.Dir(cp.KubeconfigPath))
	}
	return err
}

// writeKubeconfig writes a kubeconfig for a new user in groups to a temp dir.
func (cp *ControlPlane) writeKubeconfig(name string, groups []string) (string, error) {
	user, err := cp.Env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return "", fmt.Errorf("adding user %s: %w", name, err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("rendering kubeconfig for %s: %w", name, err)
	}
	dir, err := os.MkdirTemp("", "accelstack-kubeconfig-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return "", fmt.Errorf("writing kubeconfig: %w", err)
	}
	return path, nil
}

// startControllerManager runs kube-controller-manager against the apiserver
// and waits until it is healthy and has created the default ServiceAccount.
func (cp *ControlPlane) startControllerManager(t testing.TB) {
	t.Helper()
	assets, err := KubeAssets()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := cp.writeKubeconfig("kube-controller-manager", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Dir(kubeconfig)) })
	port := freePort(t)
	kcm := StartProcess(t, "kube-controller-manager", filepath.Join(assets, "kube-controller-manager"), []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--leader-elect=false",
		// The token controller needs a signing key; tests authenticate with
		// certificates, so leave ServiceAccount tokens out.
		"--controllers=*,-serviceaccount-token-controller",
	})
	healthz := HealthzProbe(port)
	err = kcm.WaitReady(60*time.Second, func(ctx context.Context) error {
		if err := healthz(ctx); err != nil {
			return err
		}
		// The ServiceAccount controller creating "default" shows the
		// controllers are running, not only serving health.
		return cp.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
	})
	if err != nil {
		t.Fatalf("waiting for kube-controller-manager: %v", err)
	}
}

// HealthzProbe checks the self-signed /healthz of a component a test or
// bench started on port of loopback.
func HealthzProbe(port int) func(context.Context) error {
	httpClient := &http.Client{Transport: insecureTransport(), Timeout: 2 * time.Second}
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", port)
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("healthz: %s", resp.Status)
		}
		return nil
	}
}

// CreateNamespace creates the namespace name through c, failing the test
// if it cannot.
func CreateNamespace(ctx context.Context, t testing.TB, c client.Client, name string) {
	t.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// startedOnTemplate finishes the start of a control plane on the etcd
// template: it waits for the CRDs to be served and points the conversions
// at this control plane's webhook server.
func startedOnTemplate(env *envtest.Environment, cfg *rest.Config, scheme *runtime.Scheme) error {
	if err := waitForCRDs(cfg); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), crdInstallTimeout)
	defer cancel()
	return pointConversions(ctx, env, c, scheme)
}
