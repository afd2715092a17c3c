package integration

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
	"github.com/accelstack/accelstack/pkg/datacube"
	"github.com/accelstack/accelstack/pkg/ranktable"
	"github.com/accelstack/accelstack/pkg/shim"
	"github.com/accelstack/accelstack/test/harness"
)

func unrelatedJob(ns, name string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
		}}},
	}
}

func claim(ns, name string, labels map[string]string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1")}},
		},
	}
}

// cachedNames lists the names of list's items in the manager's cache once
// want appear there (the cache fills asynchronously), sorted.
func cachedNames(ctx context.Context, t *testing.T, cache client.Reader, list client.ObjectList, want []string) []string {
	t.Helper()
	var names []string
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := cache.List(ctx, list, client.InNamespace("cache")); err != nil {
			return false, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return false, err
		}
		names = names[:0]
		for _, o := range items {
			names = append(names, o.(client.Object).GetName())
		}
		sort.Strings(names)
		for _, w := range want {
			if !slices.Contains(names, w) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("cache never held %v of %T; holds %v: %v", want, list, names, err)
	}
	return names
}

// TestManagerCachesOnlyOwnedObjects checks that the manager's cache holds
// the PVCs, Jobs, pods and ConfigMaps of the controllers, selected by label,
// and none of the cluster's others; that a shim's PVC created before PVCs
// were labelled is adopted (labelled); and that an unlabelled Job in the way
// of a DataCube is still seen as a conflict.
func TestManagerCachesOnlyOwnedObjects(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := cp.Client
	harness.CreateNamespace(ctx, t, c, "cache")

	// The cluster's other objects, and a rank-table ConfigMap.
	for _, o := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cache", Name: "other-config"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cache", Name: "rings-config-job", Labels: map[string]string{ranktable.RingControllerLabel: "ascend-910"}}},
		// A tenant's ConfigMap, labelled into the cache, as large as the API
		// server takes.
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cache", Name: "tenant-rings", Labels: map[string]string{ranktable.RingControllerLabel: "x", "big": "y"},
				Annotations: map[string]string{"note": strings.Repeat("a", 200<<10)}},
			Data: map[string]string{"hccl.json": strings.Repeat("d", 700<<10)},
		},
		claim("cache", "other-claim", nil),
		unrelatedJob("cache", "other-job"),
		unrelatedJob("cache", "taken-batchjob"),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "cache", Name: "other-pod"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		// A tenant's pod labelled into the cache, which no controller owns.
		&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cache", Name: "tenant-pod", Labels: map[string]string{datacube.NameLabelKey: "copy"},
				Annotations: map[string]string{"note": strings.Repeat("a", 200<<10)}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Env: []corev1.EnvVar{{Name: "BIG", Value: strings.Repeat("e", 500<<10)}}}}},
		},
		harness.S3cfgSecret("cache", "s3", map[string]string{".s3cfg": harness.ExampleS3cfg}, nil),
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	s3Shim := func(name string) *tensorstackv1beta2.StorageShim {
		return &tensorstackv1beta2.StorageShim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cache", Name: name},
			Spec: tensorstackv1beta2.StorageShimSpec{Type: "s3", S3: &tensorstackv1beta2.S3{
				URI: "s3://bucket/p", SecretRef: corev1.LocalObjectReference{Name: "s3"},
			}},
		}
	}
	// A shim whose PVC an earlier version created, without the label.
	legacy := s3Shim("legacy")
	if err := c.Create(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	legacyPVC := claim("cache", "legacy", nil)
	legacyPVC.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: tensorstackv1beta2.GroupVersion.String(), Kind: "StorageShim", Name: legacy.Name, UID: legacy.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
	legacyPVC.Spec.VolumeName = "storageshim-" + string(legacy.UID)
	if err := c.Create(ctx, legacyPVC); err != nil {
		t.Fatal(err)
	}

	ctrls := cp.StartControllers(t)
	if err := c.Create(ctx, s3Shim("fresh")); err != nil {
		t.Fatal(err)
	}
	for _, dc := range []string{"copy", "taken"} {
		if err := c.Create(ctx, &tensorstackv1beta1.DataCube{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cache", Name: dc},
			Spec: tensorstackv1beta1.DataCubeSpec{
				Source: tensorstackv1beta1.DataReference{Type: "s3", Options: s3Options("s3://bucket/p")},
				Sink:   tensorstackv1beta1.DataReference{Type: "pvc", PVC: &tensorstackv1beta1.PVCReference{Name: "data"}},
			},
		}); err != nil {
			t.Fatal(err)
		}
	}
	harness.WaitStorageShim(ctx, t, c, "cache", "fresh", shim.ReasonPending)
	harness.WaitStorageShim(ctx, t, c, "cache", "legacy", shim.ReasonPending)
	if err := c.Get(ctx, client.ObjectKeyFromObject(legacyPVC), legacyPVC); err != nil {
		t.Fatal(err)
	}
	if legacyPVC.Labels[shim.PVCLabelKey] != string(legacy.UID) {
		t.Errorf("PVC created before the label: labels %v, want %s=%s", legacyPVC.Labels, shim.PVCLabelKey, legacy.UID)
	}
	taken := waitDataCube(ctx, t, c, client.ObjectKey{Namespace: "cache", Name: "taken"}, "Failed", func(d *tensorstackv1beta1.DataCube) bool {
		return isTrue(d, tensorstackv1beta1.DataCubeFailed)
	})
	if cond := condition(taken, tensorstackv1beta1.DataCubeFailed); cond.Reason != datacube.ReasonJobConflict {
		t.Errorf("DataCube whose Job name is taken by an unlabelled Job: Failed reason %q, want %s", cond.Reason, datacube.ReasonJobConflict)
	}

	cache := ctrls.Manager.GetCache()
	for _, tc := range []struct {
		list    client.ObjectList
		obj     client.Object
		want    []string
		outside string
	}{
		{&corev1.PersistentVolumeClaimList{}, &corev1.PersistentVolumeClaim{}, []string{"fresh", "legacy"}, "other-claim"},
		{&batchv1.JobList{}, &batchv1.Job{}, []string{"copy-batchjob"}, "other-job"},
		{&corev1.ConfigMapList{}, &corev1.ConfigMap{}, []string{"rings-config-job", "tenant-rings"}, "other-config"},
		{&corev1.PodList{}, &corev1.Pod{}, []string{"tenant-pod"}, "other-pod"},
	} {
		got := cachedNames(ctx, t, cache, tc.list, tc.want)
		if diff := cmp.Diff(tc.want, got, cmpEmptyIsNil); diff != "" {
			t.Errorf("cached %T (-want +got):\n%s", tc.list, diff)
		}
		err := cache.Get(ctx, client.ObjectKey{Namespace: "cache", Name: tc.outside}, tc.obj)
		if !apierrors.IsNotFound(err) {
			t.Errorf("cache Get of the unlabelled %T %s: %v, want NotFound", tc.obj, tc.outside, err)
		}
	}
	// What a tenant labels into the cache costs its metadata, not its data.
	tenant := &corev1.ConfigMap{}
	if err := cache.Get(ctx, client.ObjectKey{Namespace: "cache", Name: "tenant-rings"}, tenant); err != nil {
		t.Fatal(err)
	}
	if len(tenant.Data) != 0 || len(tenant.Annotations) != 0 || len(tenant.ManagedFields) != 0 ||
		!cmp.Equal(tenant.Labels, map[string]string{ranktable.RingControllerLabel: "x"}) {
		t.Errorf("cached tenant ConfigMap: %d data keys, annotations %d, managed fields %d, labels %v; want its name and the label only",
			len(tenant.Data), len(tenant.Annotations), len(tenant.ManagedFields), tenant.Labels)
	}
	// A labelled pod no controller owns is a stub; a Job the DataCube
	// controller owns is whole.
	pod := &corev1.Pod{}
	if err := cache.Get(ctx, client.ObjectKey{Namespace: "cache", Name: "tenant-pod"}, pod); err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Containers) != 0 || len(pod.Annotations) != 0 || pod.Labels[datacube.NameLabelKey] != "copy" {
		t.Errorf("cached tenant pod: %d containers, %d annotations, labels %v; want a stub with its labels",
			len(pod.Spec.Containers), len(pod.Annotations), pod.Labels)
	}
	job := &batchv1.Job{}
	if err := cache.Get(ctx, client.ObjectKey{Namespace: "cache", Name: "copy-batchjob"}, job); err != nil {
		t.Fatal(err)
	}
	if len(job.Spec.Template.Spec.Containers) == 0 || len(job.OwnerReferences) == 0 {
		t.Errorf("cached DataCube Job: %d containers, owners %v; want the whole Job", len(job.Spec.Template.Spec.Containers), job.OwnerReferences)
	}
	pvc := &corev1.PersistentVolumeClaim{}
	if err := cache.Get(ctx, client.ObjectKeyFromObject(legacyPVC), pvc); err != nil {
		t.Fatal(err)
	}
	if len(pvc.ManagedFields) != 0 {
		t.Errorf("cached PVC %s holds %d managed fields", pvc.Name, len(pvc.ManagedFields))
	}
	if log := ctrls.Log(); strings.Contains(log, "AKIAEXAMPLE") || strings.Contains(log, "example-secret-key") {
		t.Error("the controllers' log holds an S3 key")
	}
}

var cmpEmptyIsNil = cmp.Transformer("emptyIsNil", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})
