package cacheselector

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// tenantMeta is the metadata of an object a tenant labels into a cache:
// the label it needs, plus as much else as the API server lets it add.
func tenantMeta(name string) metav1.ObjectMeta {
	big := strings.Repeat("x", 200<<10)
	return metav1.ObjectMeta{
		Namespace: "team", Name: name, UID: "uid-1", ResourceVersion: "7",
		Labels:          map[string]string{"ring-controller.atlas": "ascend-910", "other": "a"},
		Annotations:     map[string]string{"note": big},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u", Controller: ptr.To(true)}},
		ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
	}
}

func TestMetadataOnly(t *testing.T) {
	want := metav1.ObjectMeta{
		Namespace: "team", Name: "cm", UID: "uid-1", ResourceVersion: "7",
		Labels: map[string]string{"ring-controller.atlas": "ascend-910"},
	}
	transform := MetadataOnly("ring-controller.atlas")
	for _, tc := range []struct {
		name string
		in   any
		want any
	}{
		{
			name: "ConfigMap",
			in: &corev1.ConfigMap{ObjectMeta: tenantMeta("cm"),
				Data: map[string]string{"hccl.json": strings.Repeat("y", 1<<20)}, BinaryData: map[string][]byte{"b": make([]byte, 1<<10)}},
			want: &corev1.ConfigMap{ObjectMeta: want},
		},
		{
			name: "PVC keeps its access modes",
			in: &corev1.PersistentVolumeClaim{ObjectMeta: tenantMeta("cm"), Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, VolumeName: "pv",
			}},
			want: &corev1.PersistentVolumeClaim{ObjectMeta: want, Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			}},
		},
		{
			name: "pod",
			in:   &corev1.Pod{ObjectMeta: tenantMeta("cm"), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}},
			want: &corev1.Pod{ObjectMeta: want},
		},
		{
			name: "metadata",
			in:   &metav1.PartialObjectMetadata{ObjectMeta: tenantMeta("cm")},
			want: &metav1.PartialObjectMetadata{ObjectMeta: want},
		},
		{
			name: "other types keep their spec",
			in:   &appsv1.Deployment{ObjectMeta: tenantMeta("cm"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}},
			want: &appsv1.Deployment{ObjectMeta: want, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := transform(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("transformed (-want +got):\n%s", diff)
			}
		})
	}
	if got, err := transform("not an object"); err != nil || got != "not an object" {
		t.Errorf("transform of a non-object = %v, %v", got, err)
	}
}
