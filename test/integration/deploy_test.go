package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/explorer"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/manager"
	"github.com/accelstack/accelstack/pkg/notebook"
	"github.com/accelstack/accelstack/pkg/satoken"
	"github.com/accelstack/accelstack/pkg/tensorboard"
	"github.com/accelstack/accelstack/test/harness"
)

// TestDeployManifestsApply applies deploy/ with the real kubectl into the
// real apiserver, as an admin would, and checks the workloads were created.
func TestDeployManifestsApply(t *testing.T) {
	t.Parallel()
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
	for _, name := range []string{"controllers", "csi-s3-controller", "t9k-scheduler", "gateway", "hydra"} {
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

// deployObjects decodes every object of the YAML files under deploy/.
func deployObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	err = filepath.WalkDir(filepath.Join(root, "deploy"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		objs = append(objs, decodeYAML(t, path, b)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// decodeYAML decodes a multi-document YAML stream.
func decodeYAML(t *testing.T, name string, b []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// TestNoClusterRoleGrantsLeases: leader-election leases are granted only
// in a namespace, so no component can take over another's lease.
func TestNoClusterRoleGrantsLeases(t *testing.T) {
	t.Parallel()
	roles := 0
	for _, o := range deployObjects(t) {
		if o.GetKind() != "ClusterRole" {
			continue
		}
		roles++
		rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
		for _, r := range rules {
			res, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
			for _, name := range res {
				if name == "leases" || name == "*" {
					t.Errorf("ClusterRole %s grants %s", o.GetName(), name)
				}
			}
		}
	}
	if roles == 0 {
		t.Fatal("no ClusterRole found under deploy/")
	}
}

// TestNVIDIAVolumeMountsComponent renders deploy/ with the
// nvidia-volume-mounts component, as an admin's overlay would, and checks
// that it sets the volume-mounts device list while the default stays envvar.
func TestNVIDIAVolumeMountsComponent(t *testing.T) {
	t.Parallel()
	assets, err := harness.KubeAssets()
	if err != nil {
		t.Fatal(err)
	}
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	overlay := t.TempDir()
	rel := func(p string) string {
		r, err := filepath.Rel(overlay, filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	kustomization := fmt.Sprintf("resources: [%s]\ncomponents: [%s]\n", rel("deploy"), rel("deploy/components/nvidia-volume-mounts"))
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	strategy := func(dir string) string {
		t.Helper()
		out, err := exec.Command(filepath.Join(assets, "kubectl"), "kustomize", dir).Output()
		if err != nil {
			t.Fatalf("kubectl kustomize %s: %v", dir, err)
		}
		for _, o := range decodeYAML(t, dir, out) {
			if o.GetKind() != "DaemonSet" || o.GetName() != "device-plugin" {
				continue
			}
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			env, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
			for _, e := range env {
				if e.(map[string]any)["name"] == "DEVICE_LIST_STRATEGY" {
					return fmt.Sprint(e.(map[string]any)["value"])
				}
			}
			return "unset"
		}
		t.Fatalf("no device-plugin DaemonSet rendered from %s", dir)
		return ""
	}
	if got := strategy(overlay); got != "volume-mounts" {
		t.Errorf("DEVICE_LIST_STRATEGY with the component = %q, want volume-mounts", got)
	}
	if got := strategy(filepath.Join(root, "deploy")); got != "unset" {
		t.Errorf("DEVICE_LIST_STRATEGY by default = %q, want unset (envvar)", got)
	}
}

// TestControllerPolicies applies the controllers' RBAC and admission policy
// from deploy/ and checks, acting as the controllers' service account, that
// they may write only rank-table ConfigMaps, only StorageShim PVs, and only
// their own webhook certificate Secret among the Secrets of their namespace.
func TestControllerPolicies(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t, harness.WithoutCRDs())
	cp.ApplyDeploy(t, "namespace.yaml", "rbac/role.yaml", "controllers/deployment.yaml", "controllers/policies.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := cp.Client
	for _, o := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "rings-config-job"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "accelstack-system", Name: "other"}},
	} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	sa := saClient(t, cp.Config, "controllers", "")
	update := func(name string) error {
		cm, err := sa.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data = map[string]string{"hccl.json": "{}"}
		_, err = sa.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}
	// The API server loads a new policy asynchronously: wait for its first denial.
	var denied error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		denied = update("settings")
		return deniedByPolicy(denied), nil
	})
	if err != nil {
		t.Fatalf("update of ConfigMap settings as the controllers = %v, want denied by the policy", denied)
	}
	if !strings.Contains(denied.Error(), "rings-config-") {
		t.Errorf("denial %q does not say which ConfigMaps are allowed", denied)
	}
	if err := update("rings-config-job"); err != nil {
		t.Errorf("update of the rank-table ConfigMap: %v", err)
	}
	// A job's hostfile and key Secret: <job>-config and <job>-ssh labelled
	// with the job's name, and nothing else.
	jobLabels := map[string]string{jobs.JobNameLabel: "train"}
	satLabels := map[string]string{satoken.NameLabelKey: "ci"}
	for _, tc := range []struct {
		obj  client.Object
		deny bool
	}{
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "train-config", Labels: jobLabels}}, false},
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other-config", Labels: jobLabels}}, true},
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "train-config-2"}}, true},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "train-ssh", Labels: jobLabels}}, false},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other-ssh", Labels: jobLabels}}, true},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "train-ssh-2"}}, true},
		// A ServiceAccountToken's Secret: <token>-<5 hex> labelled with the
		// token's name, and nothing else.
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ci-0a1b2", Labels: satLabels}}, false},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ci-0a1b2x", Labels: satLabels}}, true},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ci-other", Labels: satLabels}}, true},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cd-0a1b2", Labels: satLabels}}, true},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ci-0a1b2"}}, true},
		// The access Secret of a Notebook, TensorBoard or Explorer child:
		// <name>-access labelled with the name, created only.
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "managed-notebook-0a1b2c3d-access",
			Labels: map[string]string{notebook.NotebookLabelKey: "managed-notebook-0a1b2c3d"}}}, false},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tb-tensorboard-access",
			Labels: map[string]string{tensorboard.LabelKey: "tb-tensorboard"}}}, false},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ex-explorer-code-server-access",
			Labels: map[string]string{explorer.LabelKey: "ex-explorer-code-server"}}}, false},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other-access",
			Labels: map[string]string{notebook.NotebookLabelKey: "managed-notebook-0a1b2c3d"}}}, true},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tb2-tensorboard-access"}}, true},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tb3-tensorboard-access",
			Labels: map[string]string{"app.kubernetes.io/instance": "tb3-tensorboard"}}}, true},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tb-tensorboard-access-2",
			Labels: map[string]string{tensorboard.LabelKey: "tb-tensorboard"}}}, true},
	} {
		var err error
		switch o := tc.obj.(type) {
		case *corev1.ConfigMap:
			_, err = sa.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Secret:
			_, err = sa.CoreV1().Secrets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		}
		if tc.deny != deniedByPolicy(err) || (!tc.deny && err != nil) {
			t.Errorf("create of %T %s as the controllers = %v, want denied %v", tc.obj, tc.obj.GetName(), err, tc.deny)
		}
	}
	// An access Secret is never rewritten: no update, not even the
	// controllers' own.
	access, err := sa.CoreV1().Secrets("default").Get(ctx, "tb-tensorboard-access", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	access.StringData = map[string]string{"token": "chosen"}
	if _, err := sa.CoreV1().Secrets("default").Update(ctx, access, metav1.UpdateOptions{}); !deniedByPolicy(err) {
		t.Errorf("update of an access Secret as the controllers = %v, want denied by the policy", err)
	}

	pv := func(name string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "s3.csi.tensorstack.dev", VolumeHandle: name}},
			},
		}
	}
	if _, err := sa.CoreV1().PersistentVolumes().Create(ctx, pv("other-pv"), metav1.CreateOptions{}); !deniedByPolicy(err) {
		t.Errorf("create of PV other-pv as the controllers = %v, want denied by the policy", err)
	}
	if _, err := sa.CoreV1().PersistentVolumes().Create(ctx, pv("storageshim-1234"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create of a StorageShim PV: %v", err)
	}
	if err := admin.Create(ctx, pv("admins-pv")); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"spec":{"claimRef":null}}`)
	if _, err := sa.CoreV1().PersistentVolumes().Patch(ctx, "admins-pv", types.MergePatchType, patch, metav1.PatchOptions{}); !deniedByPolicy(err) {
		t.Errorf("patch of PV admins-pv as the controllers = %v, want denied by the policy", err)
	}
	if _, err := sa.CoreV1().PersistentVolumes().Patch(ctx, "storageshim-1234", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Errorf("patch of a StorageShim PV as the controllers: %v", err)
	}
	if err := sa.CoreV1().PersistentVolumes().Delete(ctx, "admins-pv", metav1.DeleteOptions{}); !deniedByPolicy(err) {
		t.Errorf("delete of PV admins-pv as the controllers = %v, want denied by the policy", err)
	}

	secrets := sa.CoreV1().Secrets("accelstack-system")
	cert := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: manager.WebhookCertSecretName}, Data: map[string][]byte{"ca.crt": []byte("x")}}
	if cert, err = secrets.Create(ctx, cert, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create of the webhook certificate Secret: %v", err)
	}
	if _, err := secrets.Update(ctx, cert, metav1.UpdateOptions{}); err != nil {
		t.Errorf("update of the webhook certificate Secret: %v", err)
	}
	other, err := secrets.Get(ctx, "other", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err) // StorageShims name Secrets in any namespace: get is cluster-wide
	}
	if _, err := secrets.Update(ctx, other, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("update of another Secret of accelstack-system as the controllers = %v, want Forbidden", err)
	}
	if _, err := sa.CoreV1().Secrets("accelstack-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list of Secrets as the controllers = %v, want Forbidden", err)
	}
}
