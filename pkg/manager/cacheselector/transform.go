package cacheselector

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MetadataOnly is the transform of a cache whose objects a controller only
// maps to requests, or whose payload it reads from the API server: of each
// object it keeps the name, namespace, UID, resource version, generation,
// creation and deletion times and the labels keepLabels name, and drops
// the rest of its metadata (other labels, annotations, owner references,
// all of which a tenant may make as large as the object allows) and its
// payload: a ConfigMap's or Secret's data, a pod's or PVC's spec and
// status, except a PVC's access modes. An object a tenant labels into such
// a cache then costs a few hundred bytes, not the megabyte of data or
// annotations it may carry. Objects of other types keep their spec.
func MetadataOnly(keepLabels ...string) cache.TransformFunc {
	return func(in any) (any, error) {
		o, ok := in.(client.Object)
		if !ok {
			return in, nil
		}
		var l map[string]string
		for _, k := range keepLabels {
			if v, ok := o.GetLabels()[k]; ok {
				if l == nil {
					l = make(map[string]string, len(keepLabels))
				}
				l[k] = v
			}
		}
		meta := metav1.ObjectMeta{
			Name: o.GetName(), Namespace: o.GetNamespace(), UID: o.GetUID(), ResourceVersion: o.GetResourceVersion(),
			Generation: o.GetGeneration(), CreationTimestamp: o.GetCreationTimestamp(), DeletionTimestamp: o.GetDeletionTimestamp(),
			Labels: l,
		}
		switch t := in.(type) {
		case *corev1.ConfigMap:
			return &corev1.ConfigMap{TypeMeta: t.TypeMeta, ObjectMeta: meta}, nil
		case *corev1.Secret:
			return &corev1.Secret{TypeMeta: t.TypeMeta, ObjectMeta: meta, Type: t.Type}, nil
		case *corev1.Pod:
			return &corev1.Pod{TypeMeta: t.TypeMeta, ObjectMeta: meta}, nil
		case *corev1.PersistentVolumeClaim:
			return &corev1.PersistentVolumeClaim{TypeMeta: t.TypeMeta, ObjectMeta: meta,
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: t.Spec.AccessModes}}, nil
		case *metav1.PartialObjectMetadata:
			return &metav1.PartialObjectMetadata{TypeMeta: t.TypeMeta, ObjectMeta: meta}, nil
		}
		o.SetManagedFields(nil)
		o.SetAnnotations(nil)
		o.SetOwnerReferences(nil)
		o.SetLabels(l)
		return in, nil
	}
}
