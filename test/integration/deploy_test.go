package integration

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/test/harness"
)

// TestDeployManifestsApply applies deploy/ with the real kubectl into the
// real apiserver, as an admin would, and checks the workloads were created.
func TestDeployManifestsApply(t *testing.T) {
	cp := harness.StartControlPlane(t, harness.WithoutCRDs())
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(cp.Env.BinaryAssetsDirectory, "kubectl")
	out, err := exec.Command(kubectl, "--kubeconfig", cp.KubeconfigPath, "apply", "--server-side", "--force-conflicts",
		"-k", filepath.Join(root, "deploy")).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply -k deploy: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range []string{"device-plugin", "ascend-device-plugin", "node-agent", "csi-s3-node"} {
		if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "accelstack-system", Name: name}, &appsv1.DaemonSet{}); err != nil {
			t.Errorf("DaemonSet %s: %v", name, err)
		}
	}
	for _, name := range []string{"controllers", "csi-s3-controller"} {
		if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "accelstack-system", Name: name}, &appsv1.Deployment{}); err != nil {
			t.Errorf("Deployment %s: %v", name, err)
		}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := cp.Client.Get(ctx, client.ObjectKey{Name: "storageshims.tensorstack.dev"}, crd); err != nil {
		t.Fatal(err)
	}
	if conv := crd.Spec.Conversion; conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter ||
		conv.Webhook.ClientConfig.Service == nil || conv.Webhook.ClientConfig.Service.Name != "controllers-webhook" {
		t.Errorf("StorageShim CRD conversion = %+v, want the controllers-webhook Service", conv)
	}
}
