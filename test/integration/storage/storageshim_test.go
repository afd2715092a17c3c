package storage

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
	"github.com/accelstack/accelstack/pkg/shim"
	"github.com/accelstack/accelstack/test/harness"
)

// TestStorageShimS3 creates an S3 StorageShim against the real apiserver
// and kube-controller-manager and follows it to a bound PVC; a deleted PVC
// comes back bound to the same PV; deleting the shim removes its PVC and PV
// (the PV is Retain: the csi-s3 tests check that the data stays).
func TestStorageShimS3(t *testing.T) {
	cp := harness.StartControlPlane(t, harness.WithControllerManager())
	cp.StartControllers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := cp.Client
	harness.CreateNamespace(ctx, t, c, "demo")

	if err := c.Create(ctx, harness.S3cfgSecret("demo", "s3-secret-demo", map[string]string{".s3cfg": harness.ExampleS3cfg}, map[string]string{shim.ResourceLabelKey: "s3-cfg"})); err != nil {
		t.Fatal(err)
	}
	obj := &tensorstackv1beta2.StorageShim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "storageshim-s3-demo"},
		Spec: tensorstackv1beta2.StorageShimSpec{Type: "s3", S3: &tensorstackv1beta2.S3{
			URI: "s3://bucket/path/subpath", ReadOnly: true, SecretRef: corev1.LocalObjectReference{Name: "s3-secret-demo"},
		}},
	}
	if err := c.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	got := harness.WaitStorageShim(ctx, t, c, "demo", obj.Name, shim.ReasonBound)
	if got.Status.Phase != corev1.ClaimBound {
		t.Errorf("status.phase = %q, want Bound", got.Status.Phase)
	}

	pvc := &corev1.PersistentVolumeClaim{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: obj.Name}, pvc); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{}
	if err := c.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); err != nil {
		t.Fatal(err)
	}
	type view struct {
		Class, Capacity string
		Modes           []corev1.PersistentVolumeAccessMode
		Reclaim         corev1.PersistentVolumeReclaimPolicy
		Driver          string
		Attrs           map[string]string
		StageSecret     string
		ReadOnly        bool
	}
	gotView := view{
		Class: *pvc.Spec.StorageClassName, Capacity: pvc.Status.Capacity.Storage().String(), Modes: pvc.Spec.AccessModes,
		Reclaim: pv.Spec.PersistentVolumeReclaimPolicy, Driver: pv.Spec.CSI.Driver, Attrs: pv.Spec.CSI.VolumeAttributes,
		StageSecret: pv.Spec.CSI.NodeStageSecretRef.Namespace + "/" + pv.Spec.CSI.NodeStageSecretRef.Name, ReadOnly: pv.Spec.CSI.ReadOnly,
	}
	wantView := view{
		Class: "csi-s3", Capacity: "1", Modes: []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany},
		Reclaim: corev1.PersistentVolumeReclaimRetain, Driver: "s3.csi.tensorstack.dev",
		Attrs:       map[string]string{"bucket": "bucket", "prefix": "path/subpath", "readOnly": "true"},
		StageSecret: "demo/s3-secret-demo", ReadOnly: true,
	}
	if diff := cmp.Diff(wantView, gotView); diff != "" {
		t.Errorf("PVC and PV (-want +got):\n%s", diff)
	}
	if !metav1.IsControlledBy(pvc, got) {
		t.Errorf("PVC owner references = %v, want the StorageShim as controller", pvc.OwnerReferences)
	}

	t.Run("spec is immutable", func(t *testing.T) {
		changed := got.DeepCopy()
		changed.Spec.S3.URI = "s3://other-bucket"
		err := c.Update(ctx, changed)
		if err == nil || !strings.Contains(err.Error(), "spec is immutable") {
			t.Fatalf("update of spec.s3.uri = %v, want refused as immutable", err)
		}
	})

	t.Run("a deleted PVC comes back bound to the same PV", func(t *testing.T) {
		if err := c.Delete(ctx, pvc); err != nil {
			t.Fatal(err)
		}
		again := &corev1.PersistentVolumeClaim{}
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(pvc), again); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return again.UID != pvc.UID && again.Status.Phase == corev1.ClaimBound, nil
		})
		if err != nil {
			t.Fatalf("recreated PVC never bound: phase %q, uid %s (deleted %s): %v", again.Status.Phase, again.UID, pvc.UID, err)
		}
		if again.Spec.VolumeName != pv.Name {
			t.Errorf("recreated PVC bound to %s, want the shim's PV %s", again.Spec.VolumeName, pv.Name)
		}
		rebound := &corev1.PersistentVolume{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pv), rebound); err != nil {
			t.Fatal(err)
		}
		if rebound.UID != pv.UID || rebound.Spec.ClaimRef == nil || rebound.Spec.ClaimRef.UID != again.UID {
			t.Errorf("PV uid %s (was %s), claimRef %+v; want the same PV claimed by the new PVC %s", rebound.UID, pv.UID, rebound.Spec.ClaimRef, again.UID)
		}
		got := harness.WaitStorageShim(ctx, t, c, "demo", obj.Name, shim.ReasonBound)
		if got.Status.Phase != corev1.ClaimBound {
			t.Errorf("status.phase = %q, want Bound", got.Status.Phase)
		}
	})

	t.Run("deletion removes PVC and PV", func(t *testing.T) {
		if err := c.Delete(ctx, got); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			errPVC := c.Get(ctx, client.ObjectKeyFromObject(pvc), &corev1.PersistentVolumeClaim{})
			errPV := c.Get(ctx, client.ObjectKeyFromObject(pv), &corev1.PersistentVolume{})
			return apierrors.IsNotFound(errPVC) && apierrors.IsNotFound(errPV), nil
		})
		if err != nil {
			t.Fatalf("PVC and PV not gone after the shim was deleted: %v", err)
		}
	})
}

// warningEvent waits for a Warning event about the shim name with reason.
func warningEvent(ctx context.Context, t *testing.T, c client.Client, ns, name, reason string) *eventsv1.Event {
	t.Helper()
	var found *eventsv1.Event
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var list eventsv1.EventList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for i, e := range list.Items {
			if e.Regarding.Kind == "StorageShim" && e.Regarding.Name == name && e.Type == corev1.EventTypeWarning && e.Reason == reason {
				found = &list.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no Warning event %s for StorageShim %s/%s: %v", reason, ns, name, err)
	}
	return found
}

// TestStorageShimFailures checks that every user error becomes a Ready=False
// condition and a Warning event whose reason and message say what to fix,
// without a PVC; that a Secret created later is picked up by the retry; and
// that no secret value reaches the status, the events or the log.
func TestStorageShimFailures(t *testing.T) {
	cp := harness.StartControlPlane(t)
	ctrls := cp.StartControllers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := cp.Client
	harness.CreateNamespace(ctx, t, c, "fail")

	for _, o := range []client.Object{
		harness.S3cfgSecret("fail", "no-key", map[string]string{"other": "x"}, nil),
		harness.S3cfgSecret("fail", "no-access-key", map[string]string{".s3cfg": "[default]\nsecret_key = s\nhost_base = http://h:1\n"}, nil),
		harness.S3cfgSecret("fail", "ceph-typed", map[string]string{".s3cfg": harness.ExampleS3cfg}, map[string]string{shim.ResourceLabelKey: "ceph-client"}),
		harness.S3cfgSecret("fail", "good", map[string]string{".s3cfg": harness.ExampleS3cfg}, nil),
		harness.S3cfgSecret("fail", "ceph-no-key", map[string]string{"userID": "admin"}, nil),
		harness.S3cfgSecret("fail", "ceph-good", map[string]string{"userID": "admin", "userKey": "AQDexample=="}, nil),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "fail", Name: "cluster-partial"}, Data: map[string]string{"driver": "cephfs.csi.ceph.com"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "fail", Name: "cluster"}, Data: map[string]string{"driver": "cephfs.csi.ceph.com", "clusterID": "c1", "fsName": "fs"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "fail", Name: "cluster-other-driver"}, Data: map[string]string{"driver": "hostpath.csi.k8s.io", "clusterID": "c1", "fsName": "fs"}},
		&corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "fail", Name: "taken"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1")}},
			},
		},
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	s3Shim := func(name, secret string) *tensorstackv1beta2.StorageShim {
		return &tensorstackv1beta2.StorageShim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "fail", Name: name},
			Spec: tensorstackv1beta2.StorageShimSpec{Type: "s3", S3: &tensorstackv1beta2.S3{
				URI: "s3://bucket/p", SecretRef: corev1.LocalObjectReference{Name: secret},
			}},
		}
	}
	cephShim := func(name, secret, cm string) *tensorstackv1beta2.StorageShim {
		return &tensorstackv1beta2.StorageShim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "fail", Name: name},
			Spec: tensorstackv1beta2.StorageShimSpec{Type: "cephfs", CephFS: &tensorstackv1beta2.CephFS{
				Path:   "/cephfs/data/user/mydata",
				Client: tensorstackv1beta2.CephClient{SecretRef: corev1.LocalObjectReference{Name: secret}},
				Server: tensorstackv1beta2.CephServer{ConfigMapRef: tensorstackv1beta2.ConfigMapReference{Name: cm}},
			}},
		}
	}
	cephShimIn := func(name, ns, cm string) *tensorstackv1beta2.StorageShim {
		s := cephShim(name, "ceph-no-key", cm)
		s.Spec.CephFS.Server.ConfigMapRef.Namespace = ns
		return s
	}
	testCases := []struct {
		name        string
		shim        *tensorstackv1beta2.StorageShim
		wantReason  string
		wantMessage string
	}{
		{name: "secret missing", shim: s3Shim("s1", "absent"), wantReason: shim.ReasonSecretNotFound, wantMessage: "Secret absent not found in namespace fail"},
		{name: "secret without .s3cfg", shim: s3Shim("s2", "no-key"), wantReason: shim.ReasonSecretInvalid, wantMessage: "Secret no-key has no key .s3cfg"},
		{name: "s3cfg without access_key", shim: s3Shim("s3", "no-access-key"), wantReason: shim.ReasonSecretInvalid, wantMessage: "access_key"},
		{name: "secret of another type", shim: s3Shim("s4", "ceph-typed"), wantReason: shim.ReasonSecretInvalid, wantMessage: `is of type "ceph-client"`},
		{name: "PVC name taken", shim: s3Shim("taken", "good"), wantReason: shim.ReasonPVCConflict, wantMessage: "PVC taken already exists and is not owned by this StorageShim"},
		{name: "ceph configmap missing", shim: cephShim("c1", "ceph-no-key", "absent"), wantReason: shim.ReasonConfigMapNotFound, wantMessage: "ConfigMap absent not found"},
		{name: "ceph configmap lacks keys", shim: cephShim("c2", "ceph-no-key", "cluster-partial"), wantReason: shim.ReasonConfigMapInvalid, wantMessage: "lacks key(s) clusterID, fsName"},
		{name: "ceph secret lacks userKey", shim: cephShim("c3", "ceph-no-key", "cluster"), wantReason: shim.ReasonSecretInvalid, wantMessage: "Secret ceph-no-key lacks key(s) userKey"},
		{name: "ceph driver not allowed", shim: cephShim("c4", "ceph-good", "cluster-other-driver"), wantReason: shim.ReasonConfigMapInvalid, wantMessage: `names CSI driver "hostpath.csi.k8s.io", which is not allowed`},
		{name: "ceph configmap in another namespace", shim: cephShimIn("c5", "kube-system", "cluster"), wantReason: shim.ReasonInvalidSpec, wantMessage: `spec.cephfs.server.configMapRef.namespace "kube-system" is not allowed`},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.Create(ctx, tc.shim); err != nil {
				t.Fatal(err)
			}
			got := harness.WaitStorageShim(ctx, t, c, "fail", tc.shim.Name, tc.wantReason)
			for _, cond := range got.Status.Conditions {
				if cond.Type == tensorstackv1beta2.StorageShimReady && (cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, tc.wantMessage)) {
					t.Errorf("Ready = %s %q, want False with message containing %q", cond.Status, cond.Message, tc.wantMessage)
				}
			}
			if e := warningEvent(ctx, t, c, "fail", tc.shim.Name, tc.wantReason); !strings.Contains(e.Note, tc.wantMessage) {
				t.Errorf("Warning event %s says %q, want it to contain %q", e.Reason, e.Note, tc.wantMessage)
			}
			if tc.wantReason == shim.ReasonPVCConflict {
				return
			}
			err := c.Get(ctx, client.ObjectKey{Namespace: "fail", Name: tc.shim.Name}, &corev1.PersistentVolumeClaim{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("PVC for a failing shim: %v, want NotFound", err)
			}
		})
	}
	t.Run("a Secret created after the shim is found by the retry", func(t *testing.T) {
		late := s3Shim("late", "late-secret")
		if err := c.Create(ctx, late); err != nil {
			t.Fatal(err)
		}
		harness.WaitStorageShim(ctx, t, c, "fail", late.Name, shim.ReasonSecretNotFound)
		if err := c.Create(ctx, harness.S3cfgSecret("fail", "late-secret", map[string]string{".s3cfg": harness.ExampleS3cfg}, nil)); err != nil {
			t.Fatal(err)
		}
		// No kube-controller-manager binds it: Pending means the PV and
		// PVC were created.
		harness.WaitStorageShim(ctx, t, c, "fail", late.Name, shim.ReasonPending)
		if err := c.Get(ctx, client.ObjectKey{Namespace: "fail", Name: late.Name}, &corev1.PersistentVolumeClaim{}); err != nil {
			t.Errorf("PVC of the shim: %v", err)
		}
	})
	t.Run("secret values are never in status, events or the log", func(t *testing.T) {
		var list tensorstackv1beta2.StorageShimList
		if err := c.List(ctx, &list, client.InNamespace("fail")); err != nil {
			t.Fatal(err)
		}
		var events eventsv1.EventList
		if err := c.List(ctx, &events, client.InNamespace("fail")); err != nil {
			t.Fatal(err)
		}
		if len(events.Items) == 0 || len(list.Items) == 0 {
			t.Fatalf("%d events, %d shims: nothing to search", len(events.Items), len(list.Items))
		}
		log := ctrls.Log()
		if !strings.Contains(log, "Reconciling StorageShim") {
			t.Fatalf("the captured log lacks the controller's lines; captured:\n%s", log)
		}
		places := map[string]string{"log": log}
		for _, s := range list.Items {
			places["status of "+s.Name] = fmt.Sprint(s.Status)
		}
		for _, e := range events.Items {
			places["event "+e.Name] = e.Note
		}
		for where, text := range places {
			for _, secret := range []string{"example-secret-key", "AKIAEXAMPLE", "AQDexample=="} {
				if strings.Contains(text, secret) {
					t.Errorf("%s contains the secret value %q", where, secret)
				}
			}
		}
	})
}

// TestStorageShimSeedManifests applies the platform's documented StorageShim
// manifests unchanged with the real kubectl (both API versions, and the
// v1beta1 example written in the typed layout) and reads them back through
// the other version.
func TestStorageShimSeedManifests(t *testing.T) {
	cp := harness.StartControlPlane(t, harness.WithControllerManager())
	cp.StartControllers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := cp.Client
	harness.CreateNamespace(ctx, t, c, "project")

	manifests := `apiVersion: v1
kind: Secret
metadata:
  name: s3-secret-demo
  labels:
    tensorstack.dev/resource: s3-cfg
stringData:
  .s3cfg: |
` + indent(harness.ExampleS3cfg, "    ") + `---
apiVersion: tensorstack.dev/v1beta1
kind: StorageShim
metadata:
  name: storageshim-s3-demo
spec:
  type: s3
  s3:
    uri: "s3://bucket/path/subpath"
    readOnly: false
    secretRef:
      name: s3-secret-demo
---
apiVersion: tensorstack.dev/v1beta1
kind: StorageShim
metadata:
  name: dataset
spec:
  readOnly: false
  s3:
    uri: 's3://42a3de90-d9e7-4769-8fc4-48a65fb561d5'
  secretRef:
    name: s3-secret-demo
---
apiVersion: v1
kind: Secret
metadata:
  name: ceph-client-key-demo
  labels:
    tensorstack.dev/resource: ceph-client
stringData:
  userID: admin
  userKey: AQDexample==
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ceph-cluster-config-demo
  labels:
    tensorstack.dev/resource: ceph-cluster
data:
  driver: cephfs.csi.ceph.com
  clusterID: cluster-1
  fsName: myfs
---
apiVersion: tensorstack.dev/v1beta2
kind: StorageShim
metadata:
  name: storageshim-cephfs-demo
spec:
  type: cephfs
  cephfs:
    path: /cephfs/data/user/mydata
    client:
      secretRef:
        name: ceph-client-key-demo
    server:
      configMapRef:
        name: ceph-cluster-config-demo
`
	kubectl := exec.Command(filepath.Join(cp.Env.BinaryAssetsDirectory, "kubectl"), "--kubeconfig", cp.KubeconfigPath, "-n", "project", "create", "-f", "-")
	kubectl.Stdin = strings.NewReader(manifests)
	if out, err := kubectl.CombinedOutput(); err != nil {
		t.Fatalf("kubectl create: %v\n%s", err, out)
	}
	for _, name := range []string{"storageshim-s3-demo", "dataset", "storageshim-cephfs-demo"} {
		got := harness.WaitStorageShim(ctx, t, c, "project", name, shim.ReasonBound)
		if got.Status.Phase != corev1.ClaimBound {
			t.Errorf("%s: phase %q, want Bound", name, got.Status.Phase)
		}
	}

	// The legacy layout, read through v1beta2, and back through v1beta1.
	legacy := &tensorstackv1beta2.StorageShim{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "project", Name: "dataset"}, legacy); err != nil {
		t.Fatal(err)
	}
	wantS3 := &tensorstackv1beta2.S3{URI: "s3://42a3de90-d9e7-4769-8fc4-48a65fb561d5", SecretRef: corev1.LocalObjectReference{Name: "s3-secret-demo"}}
	if diff := cmp.Diff(wantS3, legacy.Spec.S3); diff != "" || legacy.Spec.Type != "s3" {
		t.Errorf("v1beta1 legacy shim read as v1beta2: type %q, s3 (-want +got):\n%s", legacy.Spec.Type, diff)
	}
	typed := &tensorstackv1beta1.StorageShim{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "project", Name: "storageshim-cephfs-demo"}, typed); err != nil {
		t.Fatal(err)
	}
	if typed.Spec.CephFS == nil || typed.Spec.CephFS.Path != "/cephfs/data/user/mydata" || typed.Spec.Type != "cephfs" {
		t.Errorf("v1beta2 CephFS shim read as v1beta1 = %+v, want the cephfs spec kept", typed.Spec)
	}

	pvc := &corev1.PersistentVolumeClaim{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "project", Name: "storageshim-cephfs-demo"}, pvc); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{}
	if err := c.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); err != nil {
		t.Fatal(err)
	}
	wantAttrs := map[string]string{"staticVolume": "true", "rootPath": "/cephfs/data/user/mydata", "clusterID": "cluster-1", "fsName": "myfs"}
	if diff := cmp.Diff(wantAttrs, pv.Spec.CSI.VolumeAttributes); diff != "" || pv.Spec.CSI.Driver != "cephfs.csi.ceph.com" {
		t.Errorf("CephFS PV driver %q, attributes (-want +got):\n%s", pv.Spec.CSI.Driver, diff)
	}
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}
