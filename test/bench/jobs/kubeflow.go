package main

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/accelstack/accelstack/test/harness"
)

// What the training operator expects of its cluster, as its manifests
// install it: its namespace, the Secret its certificate rotator fills, and
// the directory it expects that Secret mounted at (fixed in its source).
const (
	kubeflowNamespace  = "kubeflow"
	kubeflowCertSecret = "training-operator-webhook-cert"
	kubeflowCertDir    = "/tmp/k8s-webhook-server/serving-certs"
)

// trainingOperator is the Kubeflow training operator binary and the module
// source it was built from.
type trainingOperator struct {
	bin     string
	version string
	// crds is the directory of the CRDs of that module version.
	crds string
}

// findTrainingOperator finds the binary make bench-tools installs and the
// CRDs of the module version recorded in the binary.
func findTrainingOperator() (*trainingOperator, error) {
	bin, err := harness.Tool("training-operator")
	if err != nil {
		return nil, fmt.Errorf("%w (make bench-tools builds it)", err)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("reading the build info of %s: %w", bin, err)
	}
	dir, err := harness.ModuleDir(info.Main.Path, info.Main.Version)
	if err != nil {
		return nil, err
	}
	crds := filepath.Join(dir, "manifests", "base", "crds")
	if _, err := os.Stat(crds); err != nil {
		return nil, err
	}
	return &trainingOperator{bin: bin, version: info.Main.Version, crds: crds}, nil
}

// kubeflowRun is one way of running the training operator, with only the
// controller of one workload.
type kubeflowRun struct {
	*trainingOperator
	w workload
	// settings names the way in the tables.
	settings string
	args     []string
}

// asShipped runs the training operator's controller of w with its
// defaults: one worker and a client limited to 20 requests a second (burst
// 30).
func (t *trainingOperator) asShipped(w workload) controller {
	return kubeflowRun{trainingOperator: t, w: w, settings: "defaults: 1 worker, 20 QPS"}
}

// matched runs the training operator's controller of w with as many
// workers as accelstack's controller and no client-side rate limit to speak
// of, as accelstack runs.
func (t *trainingOperator) matched(w workload, workers int) controller {
	return kubeflowRun{trainingOperator: t, w: w, settings: fmt.Sprintf("%d workers, no client rate limit", workers), args: []string{
		"--controller-threads=" + strconv.Itoa(workers), "--kube-api-qps=1000000", "--kube-api-burst=1000000",
	}}
}

func (k kubeflowRun) name() string {
	return fmt.Sprintf("training-operator %s (%s)", k.version, k.settings)
}

func (k kubeflowRun) start(ctx context.Context, cp *harness.ControlPlane, dir string) (*running, error) {
	crd := filepath.Join(k.crds, k.w.kubeflowCRD())
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{Paths: []string{crd}, ErrorIfPathMissing: true}); err != nil {
		return nil, fmt.Errorf("installing %s: %w", crd, err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: kubeflowNamespace, Name: kubeflowCertSecret}}
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kubeflowNamespace}}, secret} {
		if err := cp.Client.Create(ctx, o); err != nil {
			return nil, err
		}
	}
	if err := os.RemoveAll(kubeflowCertDir); err != nil {
		return nil, err
	}
	p, err := freePorts()
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--enable-scheme=" + k.w.scheme,
		"--metrics-bind-address=" + addr(p.metrics),
		"--health-probe-bind-address=" + addr(p.probes),
		"--webhook-server-port=" + strconv.Itoa(p.webhook),
	}, k.args...)
	// TMPDIR=/tmp: its webhook server reads the certificate from
	// $TMPDIR/k8s-webhook-server/serving-certs, its rotator checks
	// kubeflowCertDir.
	proc, err := launch(cp, "training-operator", k.bin, dir, args, "TMPDIR=/tmp")
	if err != nil {
		return nil, err
	}
	if err := mountCertSecret(ctx, cp.Client, secret); err != nil {
		return nil, errors.Join(fmt.Errorf("%w\n%s", err, proc.Log()), proc.Stop())
	}
	r, err := waitReady(ctx, proc, p, k.w.kubeflowReconciler())
	if err != nil {
		return nil, errors.Join(err, proc.Stop())
	}
	return r, nil
}

// mountCertSecret does what the kubelet does for the training operator's
// pod: once its rotator has written the webhook certificate into the Secret,
// it writes the Secret's files into kubeflowCertDir.
func mountCertSecret(ctx context.Context, c client.Client, secret *corev1.Secret) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return len(secret.Data[corev1.TLSCertKey]) > 0 && len(secret.Data[corev1.TLSPrivateKeyKey]) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the training operator's certificate in Secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	if err := os.MkdirAll(kubeflowCertDir, 0o700); err != nil {
		return err
	}
	for name, data := range secret.Data {
		if err := os.WriteFile(filepath.Join(kubeflowCertDir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (k kubeflowRun) job(namespace, name string) client.Object { return k.w.theirs(namespace, name) }

// kubeflowJob returns a kubeflow.org/v1 job of kind whose spec holds
// replicas, by replica type, under specKey.
func kubeflowJob(kind, namespace, name, specKey string, replicas map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1",
		"kind":       kind,
		"metadata":   map[string]any{"namespace": namespace, "name": name},
		"spec":       map[string]any{specKey: replicas},
	}}
}

// kubeflowReplica is the replica spec of n pods of template, with restart
// policy restart.
func kubeflowReplica(n int64, restart string, template corev1.PodTemplateSpec) map[string]any {
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&template)
	if err != nil {
		panic(err) // a corev1 value always converts
	}
	delete(tmpl, "metadata") // empty, but with a null creationTimestamp
	return map[string]any{"replicas": n, "restartPolicy": restart, "template": tmpl}
}
