package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
	"github.com/accelstack/accelstack/pkg/shim"
	"github.com/accelstack/accelstack/test/harness"
)

// TestStorageShimMountedByCSI follows a StorageShim from its YAML to a file
// in the bucket: the controller writes the PV, and the csi-s3 driver mounts
// that PV the way the kubelet would (NodeStage and NodePublish with the PV's
// volume handle, attributes and Secrets), over real FUSE and a real S3 server.
func TestStorageShimMountedByCSI(t *testing.T) {
	requireMounter(t, "rclone")
	cp := harness.StartControlPlane(t, harness.WithControllerManager())
	cp.StartControllers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := cp.Client
	harness.CreateNamespace(ctx, t, c, "shim")
	srv := harness.StartS3(t)
	s3c := makeBucket(t, srv, "datasets")
	csiClient := newCSIClient(t)

	secret := harness.S3cfgSecret("shim", "s3cfg", s3cfgSecrets(srv), map[string]string{shim.ResourceLabelKey: "s3-cfg"})
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	testCases := []struct {
		name     string
		readOnly bool
	}{
		{name: "writable"},
		{name: "readonly", readOnly: true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &tensorstackv1beta2.StorageShim{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shim", Name: tc.name},
				Spec: tensorstackv1beta2.StorageShimSpec{Type: "s3", S3: &tensorstackv1beta2.S3{
					URI: "s3://datasets/team/" + tc.name, ReadOnly: tc.readOnly, SecretRef: corev1.LocalObjectReference{Name: "s3cfg"},
				}},
			}
			if err := c.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			harness.WaitStorageShim(ctx, t, c, "shim", tc.name, shim.ReasonBound)
			pvc := &corev1.PersistentVolumeClaim{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), pvc); err != nil {
				t.Fatal(err)
			}
			pv := &corev1.PersistentVolume{}
			if err := c.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); err != nil {
				t.Fatal(err)
			}

			// The kubelet resolves the PV's secret references.
			src := pv.Spec.CSI
			stageSecret := &corev1.Secret{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: src.NodeStageSecretRef.Namespace, Name: src.NodeStageSecretRef.Name}, stageSecret); err != nil {
				t.Fatal(err)
			}
			secrets := map[string]string{}
			for k, v := range stageSecret.Data {
				secrets[k] = string(v)
			}
			staging, err := csiClient.stage(src.VolumeHandle, src.VolumeAttributes, secrets)
			if err != nil {
				t.Fatalf("NodeStageVolume with the shim's PV: %v", err)
			}
			target, err := csiClient.publish(src.VolumeHandle, staging, src.VolumeAttributes, src.ReadOnly)
			if err != nil {
				t.Fatalf("NodePublishVolume with the shim's PV: %v", err)
			}

			err = os.WriteFile(filepath.Join(target, "hello.txt"), []byte("from a pod"), 0o644)
			if tc.readOnly {
				if !errors.Is(err, syscall.EROFS) {
					t.Errorf("write to a read-only shim = %v, want EROFS", err)
				}
			} else {
				if err != nil {
					t.Fatalf("write through the shim's mount: %v", err)
				}
				// rclone uploads after close; objectSHA256 waits for it.
				data := []byte("from a pod")
				if got := objectSHA256(t, s3c, "datasets", "team/writable/hello.txt", int64(len(data))); got != sum(data) {
					t.Errorf("object through S3 sha256 = %s, want that of the file written in the mount", got)
				}
			}
			csiClient.unpublishUnstage(src.VolumeHandle, staging, target)
		})
	}
}
