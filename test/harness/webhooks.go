package harness

import (
	"context"
	"fmt"
	"os"
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
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "deploy", file))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict(b, cfg); err != nil {
		t.Fatalf("deploy/%s: %v", file, err)
	}
	wh := cp.Env.WebhookInstallOptions
	for i := range cfg.Webhooks {
		w := &cfg.Webhooks[i]
		url := fmt.Sprintf("https://%s:%d%s", wh.LocalServingHost, wh.LocalServingPort, *w.ClientConfig.Service.Path)
		w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: wh.LocalServingCAData}
		fail := admissionregistrationv1.Fail
		w.FailurePolicy = &fail
		if edit != nil {
			edit(w)
		}
	}
	if err := cp.Client.Create(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
}
