package cacheselector

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxStubLabelBytes is the most label bytes (keys and values) a stub keeps
// of an object no controller owns; past it the stub keeps only the cache's
// own label keys.
const maxStubLabelBytes = 8 << 10

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
		l := labelsNamed(o, keepLabels)
		meta := stubMeta(o, l)
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

// StubUncontrolled is the default transform of a cache selected by a label
// that a tenant can put on objects of its own. An object that has an owner
// (an owner reference, which the API server's garbage collector honours
// only while that owner exists: every object a controller creates has one)
// is kept whole but for its managed fields. Any other namespaced object,
// which none of the controllers made and none of them acts on, is kept as
// a stub: the
// name, namespace, UID, resource version, generation, creation and
// deletion times and its labels (only keepLabels if they exceed 8 KiB);
// no annotations, owner references, finalizers, spec or status. Such an
// object then costs the cache a few hundred bytes, however large the
// tenant made it, and the namespace's object counts bound how many there
// are.
func StubUncontrolled(keepLabels ...string) cache.TransformFunc {
	return func(in any) (any, error) {
		o, ok := in.(client.Object)
		if !ok {
			return in, nil
		}
		if o.GetNamespace() == "" || len(o.GetOwnerReferences()) > 0 {
			o.SetManagedFields(nil)
			return in, nil
		}
		return stub(o, StubMeta(o, keepLabels...)), nil
	}
}

// StubMeta is the metadata a stub of o keeps: its name, namespace, UID,
// resource version, generation, creation and deletion times and labels,
// only those keepLabels names if the labels exceed 8 KiB.
func StubMeta(o client.Object, keepLabels ...string) metav1.ObjectMeta {
	l := o.GetLabels()
	if labelBytes(l) > maxStubLabelBytes {
		l = labelsNamed(o, keepLabels)
	}
	return stubMeta(o, l)
}

// stub returns an object of o's type and kind with meta as its metadata
// and nothing else.
func stub(o client.Object, meta metav1.ObjectMeta) client.Object {
	if u, ok := o.(*unstructured.Unstructured); ok {
		s := &unstructured.Unstructured{}
		s.SetGroupVersionKind(u.GroupVersionKind())
		setMeta(s, meta)
		return s
	}
	s, ok := reflect.New(reflect.TypeOf(o).Elem()).Interface().(client.Object)
	if !ok {
		return o
	}
	s.GetObjectKind().SetGroupVersionKind(o.GetObjectKind().GroupVersionKind())
	setMeta(s, meta)
	return s
}

// setMeta sets on o the fields stubMeta fills.
func setMeta(o client.Object, m metav1.ObjectMeta) {
	o.SetName(m.Name)
	o.SetNamespace(m.Namespace)
	o.SetUID(m.UID)
	o.SetResourceVersion(m.ResourceVersion)
	o.SetGeneration(m.Generation)
	o.SetCreationTimestamp(m.CreationTimestamp)
	o.SetDeletionTimestamp(m.DeletionTimestamp)
	o.SetLabels(m.Labels)
}

// stubMeta is the metadata a stub of o keeps, with labels l.
func stubMeta(o client.Object, l map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: o.GetName(), Namespace: o.GetNamespace(), UID: o.GetUID(), ResourceVersion: o.GetResourceVersion(),
		Generation: o.GetGeneration(), CreationTimestamp: o.GetCreationTimestamp(), DeletionTimestamp: o.GetDeletionTimestamp(),
		Labels: l,
	}
}

// labelsNamed returns the labels of o whose keys are among keys, or nil.
func labelsNamed(o client.Object, keys []string) map[string]string {
	var l map[string]string
	for _, k := range keys {
		if v, ok := o.GetLabels()[k]; ok {
			if l == nil {
				l = make(map[string]string, len(keys))
			}
			l[k] = v
		}
	}
	return l
}

// labelBytes is the size of l's keys and values.
func labelBytes(l map[string]string) int {
	n := 0
	for k, v := range l {
		n += len(k) + len(v)
	}
	return n
}
