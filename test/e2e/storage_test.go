//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/api"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
	"github.com/accelstack/accelstack/test/cluster"
	"github.com/accelstack/accelstack/test/harness"
)

// TestStorageShim mounts StorageShim PVCs into pods through the csi-s3
// DaemonSet: a write lands in the bucket, a read-only shim refuses writes,
// and restarting the csi-s3 node pod leaves a running pod's mount working.
func TestStorageShim(t *testing.T) {
	ns := newNamespace(t)
	s3, bucket := newBucket(t, map[string]string{"data/seed.txt": "seed\n"})
	createS3Secret(t, ns)
	c := crClient(t)
	for name, readOnly := range map[string]bool{"rw": false, "ro": true} {
		shim := &tensorstackv1beta2.StorageShim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: tensorstackv1beta2.StorageShimSpec{Type: tensorstackv1beta2.StorageShimTypeS3, S3: &tensorstackv1beta2.S3{
				URI: "s3://" + bucket + "/data", ReadOnly: readOnly, SecretRef: corev1.LocalObjectReference{Name: "s3"}}},
		}
		if err := c.Create(testContext(t), shim); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"rw", "ro"} {
		waitShimReady(t, c, ns, name)
	}

	writer := withVolume(shellPod("writer", "cat /data/seed.txt && echo hello > /data/from-pod.txt && sleep 3600", nil), "rw")
	createPod(t, ns, writer)
	waitPod(t, ns, "writer", "Running", running)
	waitObject(t, s3, bucket, "data/from-pod.txt", "hello\n")
	if logs := podLogs(t, ns, "writer"); !strings.Contains(logs, "seed") {
		t.Errorf("the writer did not read the bucket's seed object through the mount: %q", logs)
	}

	reader := withVolume(shellPod("reader", "cat /data/seed.txt; if touch /data/x 2>/tmp/err; then echo WRITABLE; else cat /tmp/err; fi", nil), "ro")
	createPod(t, ns, reader)
	waitPod(t, ns, "reader", "Succeeded", succeeded)
	logs := podLogs(t, ns, "reader")
	if !strings.Contains(logs, "seed") || strings.Contains(logs, "WRITABLE") || !strings.Contains(logs, "Read-only file system") {
		t.Errorf("read-only shim: pod printed %q, want the seed and a read-only error", logs)
	}

	t.Run("csi-s3 node pod restart", func(t *testing.T) {
		old := csiNodePod(t, "")
		if err := kube.CoreV1().Pods(cluster.Namespace).Delete(testContext(t), old, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		fresh := csiNodePod(t, old)
		t.Logf("csi-s3 node pod %s replaced by %s", old, fresh)
		out, err := clus.Kubectl(testContext(t), "-n", ns, "exec", "writer", "--", "sh", "-c", "cat /data/seed.txt && echo after > /data/after-restart.txt")
		if err != nil {
			t.Fatalf("the running pod's mount broke with the csi-s3 node pod: %v (%s)", err, out)
		}
		waitObject(t, s3, bucket, "data/after-restart.txt", "after\n")
	})
}

// TestDataCubeCopiesPrefixIntoPVC runs a DataCube from an S3 prefix into
// a PVC through the real Job controller and kubelet.
func TestDataCubeCopiesPrefixIntoPVC(t *testing.T) {
	ns := newNamespace(t)
	objects := map[string]string{"src/a.txt": "alpha\n", "src/sub/b.txt": "beta\n", "src/sub/deeper/c.bin": strings.Repeat("c", 300<<10)}
	_, bucket := newBucket(t, objects)
	createS3Secret(t, ns)
	dir := hostPathPVC(t, ns, "sink")
	c := crClient(t)
	secretOpt := func(name, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "s3"}, Key: key}}}
	}
	dc := &tensorstackv1beta1.DataCube{
		ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: ns},
		Spec: tensorstackv1beta1.DataCubeSpec{
			Source: tensorstackv1beta1.DataReference{Type: tensorstackv1beta1.DataTypeS3, Options: []corev1.EnvVar{
				secretOpt("s3-endpoint", "endpoint"), secretOpt("s3-access-key-id", "accessKeyID"),
				secretOpt("s3-secret-access-key", "secretAccessKey"), {Name: "s3-uri", Value: "s3://" + bucket + "/src/"}}},
			Sink: tensorstackv1beta1.DataReference{Type: tensorstackv1beta1.DataTypePVC,
				PVC: &tensorstackv1beta1.PVCReference{Name: "sink", SubPath: "copied"}},
		},
	}
	if err := c.Create(testContext(t), dc); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	err := wait.PollUntilContextCancel(testContext(t), 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(dc), dc); err != nil {
			lastErr = err
			return false, nil //nolint:nilerr // retried until the timeout
		}
		for _, cond := range dc.Status.Conditions {
			if cond.Type == tensorstackv1beta1.DataCubeFailed && cond.Status == corev1.ConditionTrue {
				return false, fmt.Errorf("the DataCube failed: %s", cond.Message)
			}
			if cond.Type == tensorstackv1beta1.DataCubeComplete && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("DataCube never Complete: %v; status %+v; last API error: %v", err, dc.Status, lastErr)
	}
	for key, want := range objects {
		got, err := os.ReadFile(filepath.Join(dir, "copied", strings.TrimPrefix(key, "src/")))
		if err != nil || string(got) != want {
			t.Errorf("%s in the PVC: %d bytes, err %v; want the object's %d bytes", key, len(got), err, len(want))
		}
	}
}

// TestCSIS3DynamicBucket provisions a PVC of deploy/'s csi-s3
// StorageClass through csi-provisioner and the driver's controller
// service: its PV names a fresh bucket, a pod's write lands there, and
// deleting the PVC deletes the PV and the bucket (reclaimPolicy Delete).
func TestCSIS3DynamicBucket(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	class := "csi-s3"
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "scratch"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			StorageClassName: &class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvc.Name, metav1.GetOptions{})
		if err != nil {
			lastErr = err
			return false, nil //nolint:nilerr // retried until the timeout
		}
		pvc = got
		return pvc.Status.Phase == corev1.ClaimBound, nil
	})
	if err != nil {
		t.Fatalf("PVC of class %s never Bound (phase %q): %v; last API error: %v", class, pvc.Status.Phase, err, lastErr)
	}
	pv, err := kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != "s3.csi.tensorstack.dev" {
		t.Fatalf("PV %s is not a csi-s3 volume: %+v", pv.Name, pv.Spec.PersistentVolumeSource)
	}
	bucket := pv.Spec.CSI.VolumeAttributes["bucket"]
	if bucket != pv.Name {
		t.Errorf("PV %s is backed by bucket %q, want one named after the volume", pv.Name, bucket)
	}
	_, s3 := clusterS3(t)
	if ok, err := s3.BucketExists(ctx, bucket); err != nil || !ok {
		t.Fatalf("bucket %s of PV %s: exists %v, err %v", bucket, pv.Name, ok, err)
	}

	createPod(t, ns, withVolume(shellPod("writer", "echo dynamic > /data/from-pod.txt && sync", nil), pvc.Name))
	waitPod(t, ns, "writer", "Succeeded", succeeded)
	waitObject(t, s3, bucket, "from-pod.txt", "dynamic\n")

	if err := kube.CoreV1().Pods(ns).Delete(ctx, "writer", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, pvc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var exists bool
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if _, err := kube.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, nil
		}
		exists, err = s3.BucketExists(ctx, bucket)
		return err == nil && !exists, nil
	})
	if err != nil {
		left, _ := clus.Kubectl(context.Background(), "get", "pv", pv.Name, "-o", "jsonpath={.metadata.finalizers} {.status}")
		logs, _ := clus.Kubectl(context.Background(), "-n", cluster.Namespace, "logs", "deploy/csi-s3-controller", "-c", "csi-provisioner", "--tail=20")
		t.Fatalf("after deleting the PVC: PV %s (%s) or bucket %s (exists %v) still there: %v\ncsi-provisioner:\n%s",
			pv.Name, left, bucket, exists, err, logs)
	}
}

// clusterS3 returns the cluster's S3 endpoint and a client of it.
func clusterS3(t *testing.T) (*harness.S3Server, *minio.Client) {
	t.Helper()
	srv, err := clus.S3(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	s3, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	return srv, s3
}

// newBucket creates a bucket on the cluster's S3 endpoint holding objects.
func newBucket(t *testing.T, objects map[string]string) (*minio.Client, string) {
	t.Helper()
	ctx := testContext(t)
	srv, s3 := clusterS3(t)
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	bucket := "e2e-" + hex.EncodeToString(suffix)
	if err := s3.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: srv.Region}); err != nil {
		t.Fatalf("creating bucket %s: %v", bucket, err)
	}
	for key, body := range objects {
		if _, err := s3.PutObject(ctx, bucket, key, strings.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return s3, bucket
}

// waitObject waits for an object to hold want (FUSE mounters upload a
// closed file in the background).
func waitObject(t *testing.T, s3 *minio.Client, bucket, key, want string) {
	t.Helper()
	var got string
	err := wait.PollUntilContextCancel(testContext(t), 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		obj, err := s3.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
		if err != nil {
			return false, nil
		}
		defer obj.Close()
		var b bytes.Buffer
		if _, err := b.ReadFrom(obj); err != nil {
			return false, nil
		}
		got = b.String()
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("s3://%s/%s = %q, want %q", bucket, key, got, want)
	}
}

// createS3Secret writes the cluster endpoint's credentials in both layouts:
// .s3cfg for StorageShim and plain keys for DataCube options.
func createS3Secret(t *testing.T, ns string) {
	t.Helper()
	ctx := testContext(t)
	srv, err := clus.S3(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s3", Labels: map[string]string{"tensorstack.dev/resource": "s3-cfg"}},
		StringData: map[string]string{
			".s3cfg":   srv.S3cfg(),
			"endpoint": srv.Endpoint, "accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey,
		},
	}
	if _, err := kube.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// hostPathPVC creates a PV on a host directory and its bound PVC; it
// returns the directory.
func hostPathPVC(t *testing.T, ns, name string) string {
	t.Helper()
	ctx := testContext(t)
	dir := filepath.Join("/run/accelstack", "e2e-"+ns)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	hostPathType := corev1.HostPathDirectoryOrCreate
	size := resource.MustParse("1Gi")
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: name},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: &hostPathType}},
		},
	}
	if _, err := kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
	})
	empty := ""
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &empty,
			VolumeName:       pv.Name,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if _, err := kube.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// withVolume mounts the PVC claim at /data in the pod's container.
func withVolume(pod *corev1.Pod, claim string) *corev1.Pod {
	pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	return pod
}

// waitShimReady waits for the StorageShim's Ready condition.
func waitShimReady(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	shim := &tensorstackv1beta2.StorageShim{}
	var lastErr error
	err := wait.PollUntilContextCancel(testContext(t), 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, shim); err != nil {
			lastErr = err
			return false, nil //nolint:nilerr // retried until the timeout
		}
		for _, cond := range shim.Status.Conditions {
			if cond.Type == tensorstackv1beta2.StorageShimReady {
				return cond.Status == metav1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("StorageShim %s/%s never Ready: %+v; last API error: %v", ns, name, shim.Status, lastErr)
	}
}

// csiNodePod waits for a Ready csi-s3 node pod other than not and returns
// its name.
func csiNodePod(t *testing.T, not string) string {
	t.Helper()
	var name string
	var lastErr error
	err := wait.PollUntilContextCancel(testContext(t), 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := kube.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=csi-s3-node"})
		if err != nil {
			lastErr = err
			return false, nil //nolint:nilerr // retried until the timeout
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Name != not && p.DeletionTimestamp == nil && running(p) {
				name = p.Name
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no Ready csi-s3 node pod (other than %q): %v; last API error: %v", not, err, lastErr)
	}
	return name
}

func crClient(t *testing.T) client.Client {
	t.Helper()
	cfg, err := clus.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	api.MustAddToScheme(scheme)
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
