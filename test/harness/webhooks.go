package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// InstallWebhook creates the ValidatingWebhookConfiguration of the file
// under deploy/ (e.g. "controllers/jobs-webhook.yaml"), served where envtest
// serves webhooks (the controllers StartControllers runs), failing closed so
// that a webhook that serves nothing shows. edit, if not nil, changes each
// webhook further.
func (cp *ControlPlane) InstallWebhook(t testing.TB, file string, edit func(*admissionregistrationv1.ValidatingWebhook)) {
	t.Helper()
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	readDeploy(t, file, cfg)
	for i := range cfg.Webhooks {
		w := &cfg.Webhooks[i]
		w.ClientConfig = cp.localClientConfig(*w.ClientConfig.Service.Path)
		w.FailurePolicy = failClosed()
		if edit != nil {
			edit(w)
		}
	}
	if err := cp.Client.Create(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
}

// InstallMutatingWebhook creates the MutatingWebhookConfiguration of the
// file under deploy/, as InstallWebhook does a validating one.
func (cp *ControlPlane) InstallMutatingWebhook(t testing.TB, file string) {
	t.Helper()
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	readDeploy(t, file, cfg)
	for i := range cfg.Webhooks {
		w := &cfg.Webhooks[i]
		w.ClientConfig = cp.localClientConfig(*w.ClientConfig.Service.Path)
		w.FailurePolicy = failClosed()
	}
	if err := cp.Client.Create(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
}

// ApplyDeploy applies files of deploy/ to cp with the real kubectl, as an
// admin would.
func (cp *ControlPlane) ApplyDeploy(t testing.TB, files ...string) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(cp.Env.BinaryAssetsDirectory, "kubectl")
	for _, f := range files {
		out, err := exec.Command(kubectl, "--kubeconfig", cp.KubeconfigPath, "apply", "--server-side", "-f", filepath.Join(root, "deploy", f)).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl apply -f deploy/%s: %v\n%s", f, err, out)
		}
	}
}

// readDeploy reads the one object of the file under deploy/ into obj.
func readDeploy(t testing.TB, file string, obj any) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "deploy", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, obj); err != nil {
		t.Fatalf("deploy/%s: %v", file, err)
	}
}

// localClientConfig points a webhook at path where envtest serves webhooks.
func (cp *ControlPlane) localClientConfig(path string) admissionregistrationv1.WebhookClientConfig {
	wh := cp.Env.WebhookInstallOptions
	url := fmt.Sprintf("https://%s:%d%s", wh.LocalServingHost, wh.LocalServingPort, path)
	return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: wh.LocalServingCAData}
}

// failClosed is the failure policy of webhooks under test.
func failClosed() *admissionregistrationv1.FailurePolicyType {
	fail := admissionregistrationv1.Fail
	return &fail
}
