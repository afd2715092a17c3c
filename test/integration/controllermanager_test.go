package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/test/harness"
)

// TestControllerManager checks the harness's real kube-controller-manager:
// it binds a PVC to a pre-bound static PV (as StorageShim does) and garbage
// collects an owned object when its owner goes.
func TestControllerManager(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t, harness.WithControllerManager())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := cp.Client

	t.Run("static PV binding", func(t *testing.T) {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pv-static"},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              "csi-s3",
				ClaimRef:                      &corev1.ObjectReference{Namespace: "default", Name: "claim"},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
					Driver: "s3.csi.tensorstack.dev", VolumeHandle: "bucket/prefix",
				}},
			},
		}
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: "default"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				StorageClassName: ptr.To("csi-s3"),
				VolumeName:       "pv-static",
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1")}},
			},
		}
		for _, o := range []client.Object{pv, pvc} {
			if err := c.Create(ctx, o); err != nil {
				t.Fatalf("create %T: %v", o, err)
			}
		}
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(pvc), pvc); err != nil {
				return false, err
			}
			return pvc.Status.Phase == corev1.ClaimBound, nil
		})
		if err != nil {
			t.Fatalf("PVC phase = %q, want Bound: %v", pvc.Status.Phase, err)
		}
	})

	t.Run("garbage collection", func(t *testing.T) {
		owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: "default"}}
		if err := c.Create(ctx, owner); err != nil {
			t.Fatal(err)
		}
		dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "dependent", Namespace: "default",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
		}}
		if err := c.Create(ctx, dependent); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, owner); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(dependent), &corev1.ConfigMap{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		if err != nil {
			t.Fatalf("dependent not collected after its owner was deleted: %v", err)
		}
	})
}
