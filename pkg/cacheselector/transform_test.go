package cacheselector

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

func TestStubUncontrolled(t *testing.T) {
	transform := StubUncontrolled("ring-controller.atlas")
	uncontrolled := func() metav1.ObjectMeta {
		m := tenantMeta("o")
		m.OwnerReferences = nil
		m.Finalizers = []string{"tenant/keep"}
		return m
	}
	owned := tenantMeta("o")
	owned.OwnerReferences[0].Controller = nil
	ownedWant := owned
	ownedWant.ManagedFields = nil
	stubMeta := metav1.ObjectMeta{
		Namespace: "team", Name: "o", UID: "uid-1", ResourceVersion: "7",
		Labels: map[string]string{"ring-controller.atlas": "ascend-910", "other": "a"},
	}
	controlled := tenantMeta("o")
	controlled.ManagedFields = nil
	manyLabels := uncontrolled()
	for i := range 100 {
		manyLabels.Labels[fmt.Sprintf("l%03d", i)] = strings.Repeat("v", 63) + strings.Repeat("k", 40)
	}
	podSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{{Name: "BIG", Value: strings.Repeat("e", 1<<20)}}}}}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Thing")
	u.SetNamespace("team")
	u.SetName("o")
	u.SetUID("uid-1")
	u.SetResourceVersion("7")
	u.SetLabels(map[string]string{"other": "a"})
	u.SetAnnotations(map[string]string{"note": "x"})
	u.Object["spec"] = map[string]any{"big": strings.Repeat("s", 1<<10)}
	wantU := &unstructured.Unstructured{}
	wantU.SetAPIVersion("example.com/v1")
	wantU.SetKind("Thing")
	wantU.SetNamespace("team")
	wantU.SetName("o")
	wantU.SetUID("uid-1")
	wantU.SetResourceVersion("7")
	wantU.SetLabels(map[string]string{"other": "a"})
	for _, tc := range []struct {
		name string
		in   any
		want any
	}{
		{
			name: "pod nothing owns",
			in:   &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: uncontrolled(), Spec: podSpec},
			want: &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: stubMeta},
		},
		{
			name: "StatefulSet nothing owns",
			in:   &appsv1.StatefulSet{ObjectMeta: uncontrolled(), Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3)}},
			want: &appsv1.StatefulSet{ObjectMeta: stubMeta},
		},
		{
			name: "labels past 8 KiB keep the cache's key",
			in:   &corev1.Service{ObjectMeta: manyLabels},
			want: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "o", UID: "uid-1", ResourceVersion: "7",
				Labels: map[string]string{"ring-controller.atlas": "ascend-910"}}},
		},
		{
			name: "unstructured",
			in:   u,
			want: wantU,
		},
		{
			name: "an owned Service is whole",
			in:   &corev1.Service{ObjectMeta: owned, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1"}},
			want: &corev1.Service{ObjectMeta: ownedWant, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1"}},
		},
		{
			name: "a controller's pod is whole",
			in:   &corev1.Pod{ObjectMeta: tenantMeta("o"), Spec: podSpec},
			want: &corev1.Pod{ObjectMeta: controlled, Spec: podSpec},
		},
		{
			name: "cluster-scoped objects are whole",
			in:   &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Annotations: map[string]string{"a": "b"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}},
			want: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Annotations: map[string]string{"a": "b"}}},
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
}
