package interactive

import (
	"context"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// testWorkload is a workload owned by nothing in particular.
func testWorkload(suspend bool) Workload {
	return Workload{
		Namespace: "ns", Name: "w-tensorboard",
		Labels:        map[string]string{"k": "w"},
		Selector:      map[string]string{"k": "w"},
		Suspend:       suspend,
		Pod:           corev1.PodSpec{Containers: []corev1.Container{{Name: "server", Image: "server:1"}}},
		UpstreamPort:  6006,
		ActivityImage: "activity:1",
	}
}

// newWriter returns a Writer over a fake client holding objs, whose
// updates are counted in updates.
func newWriter(t *testing.T, updates *int, objs ...client.Object) Writer {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			*updates++
			return c.Update(ctx, obj, opts...)
		},
	}).Build()
	return Writer{Client: c, Reader: c, APIReader: c, Scheme: scheme}
}

func TestWriter(t *testing.T) {
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "owner", UID: "u1"}}
	var updates int
	w := newWriter(t, &updates, owner)

	dep, created, err := w.EnsureDeployment(ctx, owner, testWorkload(false).Deployment())
	if err != nil || !created || !metav1.IsControlledBy(dep, owner) {
		t.Fatalf("create: %v created %v owners %v", err, created, dep.OwnerReferences)
	}
	if _, created, err := w.EnsureService(ctx, owner, testWorkload(false).Service()); err != nil || !created {
		t.Fatalf("create Service: %v %v", err, created)
	}

	// The same spec again: nothing written.
	if _, created, err := w.EnsureDeployment(ctx, owner, testWorkload(false).Deployment()); err != nil || created || updates != 0 {
		t.Errorf("again: %v created %v updates %d", err, created, updates)
	}
	if _, _, err := w.EnsureService(ctx, owner, testWorkload(false).Service()); err != nil || updates != 0 {
		t.Errorf("Service again: %v updates %d", err, updates)
	}

	// Suspended: replicas 0, annotations of others kept.
	got := &appsv1.Deployment{}
	if err := w.Client.Get(ctx, client.ObjectKeyFromObject(dep), got); err != nil {
		t.Fatal(err)
	}
	got.Annotations["other"] = "kept"
	if err := w.Client.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	updates = 0
	dep, _, err = w.EnsureDeployment(ctx, owner, testWorkload(true).Deployment())
	if err != nil || updates != 1 || *dep.Spec.Replicas != 0 || dep.Annotations["other"] != "kept" {
		t.Errorf("suspend: %v updates %d replicas %d annotations %v", err, updates, *dep.Spec.Replicas, dep.Annotations)
	}

	// Another owner's object of the name is left alone.
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other", UID: "u2"}}
	if _, _, err := w.EnsureDeployment(ctx, other, testWorkload(false).Deployment()); !errors.Is(err, ErrNotOwned) {
		t.Errorf("another owner's Deployment: %v", err)
	}
	if _, _, err := w.EnsureService(ctx, other, testWorkload(false).Service()); !errors.Is(err, ErrNotOwned) {
		t.Errorf("another owner's Service: %v", err)
	}
}

// TestWriterStale: a create that finds the owner's own object, which the
// cache has not seen, is ErrStale.
func TestWriterStale(t *testing.T) {
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "owner", UID: "u1"}}
	var updates int
	w := newWriter(t, &updates, owner)
	if _, _, err := w.EnsureDeployment(ctx, owner, testWorkload(false).Deployment()); err != nil {
		t.Fatal(err)
	}
	empty := newWriter(t, &updates)
	w.Reader = empty.Reader
	if _, _, err := w.EnsureDeployment(ctx, owner, testWorkload(false).Deployment()); !errors.Is(err, ErrStale) {
		t.Errorf("got %v, want ErrStale", err)
	}
}

// TestWriterStatefulSet: a StatefulSet and a Service whose type changes
// are written as Deployments are; Delete removes only the owner's.
func TestWriterStatefulSet(t *testing.T) {
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "owner", UID: "u1"}}
	var updates int
	w := newWriter(t, &updates, owner)
	sts := func(replicas int32) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nb", Labels: map[string]string{"k": "nb"}},
			Spec: appsv1.StatefulSetSpec{
				Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"k": "nb"}},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "server", Image: "server:1"}}}},
			},
		}
	}
	got, created, err := w.EnsureStatefulSet(ctx, owner, sts(1))
	if err != nil || !created || !metav1.IsControlledBy(got, owner) || got.Annotations[SpecHashAnnotationKey] == "" {
		t.Fatalf("create: %v created %v %+v", err, created, got.ObjectMeta)
	}
	if _, created, err := w.EnsureStatefulSet(ctx, owner, sts(1)); err != nil || created || updates != 0 {
		t.Errorf("again: %v created %v updates %d", err, created, updates)
	}
	if got, _, err := w.EnsureStatefulSet(ctx, owner, sts(0)); err != nil || updates != 1 || *got.Spec.Replicas != 0 {
		t.Errorf("suspend: %v updates %d", err, updates)
	}

	svc := func(typ corev1.ServiceType) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nb-ssh"},
			Spec:       corev1.ServiceSpec{Type: typ, Selector: map[string]string{"k": "nb"}, Ports: []corev1.ServicePort{{Port: 22}}},
		}
	}
	if _, created, err := w.EnsureService(ctx, owner, svc(corev1.ServiceTypeClusterIP)); err != nil || !created {
		t.Fatalf("create Service: %v %v", err, created)
	}
	if got, _, err := w.EnsureService(ctx, owner, svc(corev1.ServiceTypeNodePort)); err != nil || got.Spec.Type != corev1.ServiceTypeNodePort {
		t.Errorf("Service type: %v %+v", err, got)
	}

	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other", UID: "u2"}}
	if deleted, err := w.Delete(ctx, other, svc("")); err != nil || deleted {
		t.Errorf("another owner's delete: %v deleted %v", err, deleted)
	}
	if deleted, err := w.Delete(ctx, owner, svc("")); err != nil || !deleted {
		t.Errorf("delete: %v deleted %v", err, deleted)
	}
	if deleted, err := w.Delete(ctx, owner, svc("")); err != nil || deleted {
		t.Errorf("delete again: %v deleted %v", err, deleted)
	}
}
