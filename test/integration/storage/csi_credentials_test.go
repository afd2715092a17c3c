package storage

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
	"github.com/accelstack/accelstack/pkg/shim"
	"github.com/accelstack/accelstack/test/harness"
)

// TestStorageShimHostileSecret checks that the StorageShim controller runs
// the csi-s3 driver's credential check on the Secret: values that would add
// keys to rclone.conf or options to s3fs make the shim Ready=False with
// reason SecretInvalid and a message naming the key, not quoting the
// value, and no PVC is created, so nothing is ever mounted with them.
func TestStorageShimHostileSecret(t *testing.T) {
	cp := harness.StartControlPlane(t)
	cp.StartControllers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := cp.Client
	harness.CreateNamespace(ctx, t, c, "hostile")

	const base = "[default]\naccess_key = AK\nsecret_key = SK\nhost_base = http://s3.local:9000\n"
	testCases := []struct {
		name        string
		data        map[string]string
		wantMessage string
		value       string // must not appear in the status
	}{
		{
			name:        "secret key with carriage return",
			data:        map[string]string{".s3cfg": "[default]\naccess_key = AK\nsecret_key = x\rtype = alias\nhost_base = http://s3.local:9000\n"},
			wantMessage: "secret key .s3cfg: line 3",
			value:       "alias",
		},
		{
			name:        "region adds an s3fs option",
			data:        map[string]string{".s3cfg": base + "bucket_location = us-east-1,iam_role=auto\n"},
			wantMessage: "secret key .s3cfg: bucket_location",
			value:       "iam_role",
		},
		{
			name:        "endpoint host adds an s3fs option",
			data:        map[string]string{".s3cfg": "[default]\naccess_key = AK\nsecret_key = SK\nhost_base = https://h,iam_role=auto\n"},
			wantMessage: "secret key .s3cfg: host_base",
			value:       "iam_role",
		},
	}
	for i, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("s%d", i)
			secret := harness.S3cfgSecret("hostile", name, tc.data, map[string]string{shim.ResourceLabelKey: "s3-cfg"})
			if err := c.Create(ctx, secret); err != nil {
				t.Fatal(err)
			}
			obj := &tensorstackv1beta2.StorageShim{
				ObjectMeta: metav1.ObjectMeta{Namespace: "hostile", Name: name},
				Spec: tensorstackv1beta2.StorageShimSpec{Type: "s3", S3: &tensorstackv1beta2.S3{
					URI: "s3://bucket/p", SecretRef: corev1.LocalObjectReference{Name: name},
				}},
			}
			if err := c.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			got := harness.WaitStorageShim(ctx, t, c, "hostile", name, shim.ReasonSecretInvalid)
			for _, cond := range got.Status.Conditions {
				if cond.Type != tensorstackv1beta2.StorageShimReady {
					continue
				}
				if cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, tc.wantMessage) {
					t.Errorf("Ready = %s %q, want False with message containing %q", cond.Status, cond.Message, tc.wantMessage)
				}
			}
			if s := fmt.Sprint(got.Status); strings.Contains(s, tc.value) {
				t.Errorf("status %s quotes the Secret's value", s)
			}
			err := c.Get(ctx, client.ObjectKey{Namespace: "hostile", Name: name}, &corev1.PersistentVolumeClaim{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("PVC for a shim with a hostile Secret: %v, want NotFound", err)
			}
		})
	}
}

// TestStorageShimURIEmptySegment checks that the schema refuses an S3 URI
// with an empty path segment, which the csi-s3 driver could never mount,
// with a message naming the field, in both API versions.
func TestStorageShimURIEmptySegment(t *testing.T) {
	cp := harness.StartControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, uri := range []string{"s3://bucket/a//c", "s3://bucket//a", "s3://bucket/a//"} {
		t.Run(uri, func(t *testing.T) {
			for _, obj := range []client.Object{
				&tensorstackv1beta2.StorageShim{
					ObjectMeta: metav1.ObjectMeta{GenerateName: "shim-", Namespace: "default"},
					Spec: tensorstackv1beta2.StorageShimSpec{Type: "s3", S3: &tensorstackv1beta2.S3{
						URI: uri, SecretRef: corev1.LocalObjectReference{Name: "s"},
					}},
				},
				v1beta1Shim(uri),
			} {
				err := cp.Client.Create(ctx, obj)
				if err == nil || !strings.Contains(err.Error(), "spec.s3.uri must not contain empty path segments") {
					t.Errorf("%T: create error = %v, want one naming spec.s3.uri and empty path segments", obj, err)
				}
			}
		})
	}
	// The same URI without the empty segment is accepted.
	ok := &tensorstackv1beta2.StorageShim{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "shim-", Namespace: "default"},
		Spec: tensorstackv1beta2.StorageShimSpec{Type: "s3", S3: &tensorstackv1beta2.S3{
			URI: "s3://bucket/a/c/", SecretRef: corev1.LocalObjectReference{Name: "s"},
		}},
	}
	if err := cp.Client.Create(ctx, ok); err != nil {
		t.Errorf("creating a shim with s3://bucket/a/c/: %v", err)
	}
}

// v1beta1Shim is a legacy StorageShim of uri.
func v1beta1Shim(uri string) client.Object {
	return &tensorstackv1beta1.StorageShim{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "shim-", Namespace: "default"},
		Spec: tensorstackv1beta1.StorageShimSpec{
			S3:        &tensorstackv1beta1.S3Config{URI: uri},
			SecretRef: &corev1.LocalObjectReference{Name: "s"},
		},
	}
}
