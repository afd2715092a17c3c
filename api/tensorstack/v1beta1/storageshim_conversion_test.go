package v1beta1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelstack/accelstack/api/tensorstack/v1beta2"
)

func ref(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }

func TestConvertTo(t *testing.T) {
	cephfs := &v1beta2.CephFS{Path: "/cephfs/data", Client: v1beta2.CephClient{SecretRef: corev1.LocalObjectReference{Name: "key"}}}
	testCases := []struct {
		name string
		spec StorageShimSpec
		want v1beta2.StorageShimSpec
	}{
		{
			name: "legacy layout",
			spec: StorageShimSpec{S3: &S3Config{URI: "s3://bucket/p"}, ReadOnly: true, SecretRef: ref("legacy")},
			want: v1beta2.StorageShimSpec{Type: "s3", S3: &v1beta2.S3{URI: "s3://bucket/p", ReadOnly: true, SecretRef: *ref("legacy")}},
		},
		{
			name: "typed layout",
			spec: StorageShimSpec{Type: "s3", S3: &S3Config{URI: "s3://bucket", ReadOnly: true, SecretRef: ref("typed")}},
			want: v1beta2.StorageShimSpec{Type: "s3", S3: &v1beta2.S3{URI: "s3://bucket", ReadOnly: true, SecretRef: *ref("typed")}},
		},
		{
			name: "typed secretRef wins over legacy",
			spec: StorageShimSpec{S3: &S3Config{URI: "s3://bucket", SecretRef: ref("typed")}, SecretRef: ref("legacy")},
			want: v1beta2.StorageShimSpec{Type: "s3", S3: &v1beta2.S3{URI: "s3://bucket", SecretRef: *ref("typed")}},
		},
		{
			name: "readOnly in the typed field only",
			spec: StorageShimSpec{S3: &S3Config{URI: "s3://bucket", ReadOnly: true}, SecretRef: ref("legacy")},
			want: v1beta2.StorageShimSpec{Type: "s3", S3: &v1beta2.S3{URI: "s3://bucket", ReadOnly: true, SecretRef: *ref("legacy")}},
		},
		{
			name: "readOnly in neither field",
			spec: StorageShimSpec{S3: &S3Config{URI: "s3://bucket"}, SecretRef: ref("legacy")},
			want: v1beta2.StorageShimSpec{Type: "s3", S3: &v1beta2.S3{URI: "s3://bucket", SecretRef: *ref("legacy")}},
		},
		{
			name: "cephfs",
			spec: StorageShimSpec{Type: "cephfs", CephFS: cephfs},
			want: v1beta2.StorageShimSpec{Type: "cephfs", CephFS: cephfs},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			src := &StorageShim{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Spec: tc.spec}
			got := &v1beta2.StorageShim{}
			if err := src.ConvertTo(got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Spec); diff != "" {
				t.Errorf("v1beta2 spec (-want +got):\n%s", diff)
			}
			if got.Name != "s" || got.Namespace != "ns" {
				t.Errorf("metadata = %s/%s, want ns/s", got.Namespace, got.Name)
			}
		})
	}
}

// TestConvertFromWritesBothLayouts checks that a v1beta2 S3 shim reads
// back in v1beta1 with readOnly and secretRef in the legacy and the typed
// places, so readers of either layout see them.
func TestConvertFromWritesBothLayouts(t *testing.T) {
	hub := &v1beta2.StorageShim{Spec: v1beta2.StorageShimSpec{Type: "s3", S3: &v1beta2.S3{URI: "s3://bucket/p", ReadOnly: true, SecretRef: *ref("cfg")}}}
	got := &StorageShim{}
	if err := got.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	want := StorageShimSpec{Type: "s3", S3: &S3Config{URI: "s3://bucket/p", ReadOnly: true, SecretRef: ref("cfg")}, ReadOnly: true, SecretRef: ref("cfg")}
	if diff := cmp.Diff(want, got.Spec); diff != "" {
		t.Errorf("v1beta1 spec (-want +got):\n%s", diff)
	}
}

// TestLegacyRoundTrip converts a legacy v1beta1 shim to v1beta2 and back,
// twice: the second round gives the same objects as the first.
func TestLegacyRoundTrip(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		legacy := &StorageShim{
			ObjectMeta: metav1.ObjectMeta{Name: "dataset", Namespace: "ns", Labels: map[string]string{"a": "b"}},
			Spec:       StorageShimSpec{S3: &S3Config{URI: "s3://bucket/p"}, ReadOnly: readOnly, SecretRef: ref("cfg")},
			Status:     v1beta2.StorageShimStatus{Phase: corev1.ClaimBound},
		}
		hub1, back1 := &v1beta2.StorageShim{}, &StorageShim{}
		if err := legacy.ConvertTo(hub1); err != nil {
			t.Fatal(err)
		}
		if err := back1.ConvertFrom(hub1); err != nil {
			t.Fatal(err)
		}
		if back1.Spec.ReadOnly != readOnly || back1.Spec.S3.ReadOnly != readOnly || back1.Spec.SecretRef.Name != "cfg" ||
			back1.Spec.S3.URI != "s3://bucket/p" || back1.Status.Phase != corev1.ClaimBound || back1.Labels["a"] != "b" {
			t.Errorf("readOnly=%v: legacy shim after a round trip = %+v (spec.s3 %+v)", readOnly, back1, back1.Spec.S3)
		}
		hub2, back2 := &v1beta2.StorageShim{}, &StorageShim{}
		if err := back1.ConvertTo(hub2); err != nil {
			t.Fatal(err)
		}
		if err := back2.ConvertFrom(hub2); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(hub1, hub2); diff != "" {
			t.Errorf("readOnly=%v: v1beta2 after the second round trip (-first +second):\n%s", readOnly, diff)
		}
		if diff := cmp.Diff(back1, back2); diff != "" {
			t.Errorf("readOnly=%v: v1beta1 after the second round trip (-first +second):\n%s", readOnly, diff)
		}
	}
}
