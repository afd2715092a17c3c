package project

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/accelstack/accelstack/api"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// fakeEnv is a Reconciler over a fake API server.
type fakeEnv struct {
	r        *Reconciler
	c        client.Client
	recorder *events.FakeRecorder
}

func newFakeEnv(t *testing.T, funcs *interceptor.Funcs, objs ...client.Object) *fakeEnv {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	api.MustAddToScheme(scheme)
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&tensorstackv1beta1.Project{})
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	c := b.Build()
	rec := events.NewFakeRecorder(100)
	return &fakeEnv{r: NewReconciler(c, c, rec, nil), c: c, recorder: rec}
}

// reconcile reconciles the Project name, which must not fail.
func (e *fakeEnv) reconcile(t *testing.T, name string) ctrl.Result {
	t.Helper()
	res, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: name}})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return res
}

// get reads the object ns/name into obj, reporting whether it exists.
func (e *fakeEnv) get(t *testing.T, ns, name string, obj client.Object) bool {
	t.Helper()
	err := e.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// ready returns the Ready condition of the Project name.
func (e *fakeEnv) ready(t *testing.T, name string) tensorstackv1beta1.ProjectCondition {
	t.Helper()
	p := &tensorstackv1beta1.Project{}
	if !e.get(t, "", name, p) {
		t.Fatalf("Project %s gone", name)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == tensorstackv1beta1.ProjectReady {
			return c
		}
	}
	t.Fatalf("Project %s has no Ready condition: %+v", name, p.Status)
	return tensorstackv1beta1.ProjectCondition{}
}

// events drains the events recorded so far.
func (e *fakeEnv) events() []string {
	var out []string
	for {
		select {
		case ev := <-e.recorder.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

func quotaSpec(gpus string) corev1.ResourceQuotaSpec {
	return corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"requests.nvidia.com/gpu": resource.MustParse(gpus)}}
}

func withTemplate(p *tensorstackv1beta1.Project, spec corev1.ResourceQuotaSpec) *tensorstackv1beta1.Project {
	p.Spec.ResourceQuota = &tensorstackv1beta1.ProjectResourceQuota{Template: &tensorstackv1beta1.ProjectResourceQuotaTemplate{Spec: spec}}
	return p
}

// TestReconcileObjects: a new Project gets its finalizer, its marked
// namespace, quota, default policy, ServiceAccount and RoleBinding, all
// controlled by it, and Ready.
func TestReconcileObjects(t *testing.T) {
	p := withTemplate(makeProject("demo"), quotaSpec("2"))
	p.Spec.NetworkPolicy = &tensorstackv1beta1.ProjectNetworkPolicy{UseDefaultTemplate: true}
	e := newFakeEnv(t, nil, p)
	e.reconcile(t, "demo")

	got := &tensorstackv1beta1.Project{}
	e.get(t, "", "demo", got)
	if !controllerutil.ContainsFinalizer(got, Finalizer) {
		t.Errorf("finalizers %v, want %s", got.Finalizers, Finalizer)
	}
	if c := e.ready(t, "demo"); c.Status != corev1.ConditionTrue || c.Reason != ReasonReady {
		t.Errorf("Ready = %+v, want True %s", c, ReasonReady)
	}
	if got.Status.ResourceQuota == nil || got.Status.ResourceQuota.Name != ResourceQuotaName {
		t.Errorf("status.resourceQuota = %+v", got.Status.ResourceQuota)
	}
	ns := &corev1.Namespace{}
	if !e.get(t, "", "demo", ns) || ns.Labels[ProjectLabelKey] != "demo" {
		t.Fatalf("namespace %+v, want one marked %s=demo", ns.ObjectMeta, ProjectLabelKey)
	}
	rq := &corev1.ResourceQuota{}
	if !e.get(t, "demo", ResourceQuotaName, rq) || !equality.Semantic.DeepEqual(rq.Spec, quotaSpec("2")) {
		t.Errorf("ResourceQuota spec %+v, want %+v", rq.Spec, quotaSpec("2"))
	}
	np := &networkingv1.NetworkPolicy{}
	if !e.get(t, "demo", NetworkPolicyName, np) {
		t.Fatal("no NetworkPolicy")
	}
	if diff := cmp.Diff(defaultPolicy("demo", DefaultPolicyNamespaces), np.Spec); diff != "" {
		t.Errorf("NetworkPolicy spec (-want +got):\n%s", diff)
	}
	rb := &rbacv1.RoleBinding{}
	if !e.get(t, "demo", ServiceAccountName, rb) || rb.RoleRef.Name != ServiceAccountClusterRole {
		t.Errorf("RoleBinding %+v", rb.RoleRef)
	}
	sa := &corev1.ServiceAccount{}
	e.get(t, "demo", ServiceAccountName, sa)
	for _, o := range []client.Object{rq, np, rb, sa} {
		if !metav1.IsControlledBy(o, got) || o.GetLabels()[ProjectLabelKey] != "demo" {
			t.Errorf("%T %s: owners %v labels %v, want controlled by and marked as the Project's", o, o.GetName(), o.GetOwnerReferences(), o.GetLabels())
		}
	}

	// Dropping the quota from the spec, and opting out of the policy,
	// removes them.
	got.Spec.ResourceQuota, got.Spec.NetworkPolicy = nil, &tensorstackv1beta1.ProjectNetworkPolicy{}
	if err := e.c.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	e.reconcile(t, "demo")
	if e.get(t, "demo", ResourceQuotaName, &corev1.ResourceQuota{}) {
		t.Error("ResourceQuota kept after the spec dropped it")
	}
	if e.get(t, "demo", NetworkPolicyName, &networkingv1.NetworkPolicy{}) {
		t.Error("NetworkPolicy kept after the spec opted out")
	}
	e.get(t, "", "demo", got)
	if got.Status.ResourceQuota != nil {
		t.Errorf("status.resourceQuota = %+v without a quota", got.Status.ResourceQuota)
	}
}

// TestReconcileQuotaProfile: the quota follows the named profile; a
// missing profile leaves it as it was and says so.
func TestReconcileQuotaProfile(t *testing.T) {
	qp := &tensorstackv1beta1.QuotaProfile{ObjectMeta: metav1.ObjectMeta{Name: "small"}, Spec: quotaSpec("1")}
	p := makeProject("demo")
	p.Spec.QuotaProfile = "small"
	e := newFakeEnv(t, nil, p, qp)
	e.reconcile(t, "demo")
	rq := &corev1.ResourceQuota{}
	if !e.get(t, "demo", ResourceQuotaName, rq) || !equality.Semantic.DeepEqual(rq.Spec, quotaSpec("1")) {
		t.Fatalf("ResourceQuota spec %+v, want the profile's", rq.Spec)
	}

	qp.Spec = quotaSpec("3")
	if err := e.c.Update(context.Background(), qp); err != nil {
		t.Fatal(err)
	}
	e.reconcile(t, "demo")
	if e.get(t, "demo", ResourceQuotaName, rq); !equality.Semantic.DeepEqual(rq.Spec, quotaSpec("3")) {
		t.Errorf("ResourceQuota spec %+v, want the changed profile's", rq.Spec)
	}

	if err := e.c.Delete(context.Background(), qp); err != nil {
		t.Fatal(err)
	}
	e.reconcile(t, "demo")
	c := e.ready(t, "demo")
	if c.Status != corev1.ConditionFalse || c.Reason != ReasonQuotaProfileNotFound || !strings.Contains(c.Message, "spec.quotaProfile") {
		t.Errorf("Ready = %+v, want False %s naming spec.quotaProfile", c, ReasonQuotaProfileNotFound)
	}
	if e.get(t, "demo", ResourceQuotaName, rq); !equality.Semantic.DeepEqual(rq.Spec, quotaSpec("3")) {
		t.Errorf("ResourceQuota spec %+v changed while its profile was missing", rq.Spec)
	}
	if evs := e.events(); len(evs) == 0 || !strings.Contains(evs[len(evs)-1], ReasonQuotaProfileNotFound) {
		t.Errorf("events %q, want %s", evs, ReasonQuotaProfileNotFound)
	}
}

// TestReconcileRefusesForeignObjects: a namespace, or an object in the
// project's namespace, that is not the Project's is neither taken over nor
// changed; an object marked by an earlier Project of the name is taken
// back.
func TestReconcileRefusesForeignObjects(t *testing.T) {
	t.Run("namespace", func(t *testing.T) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Labels: map[string]string{"team": "x"}}}
		e := newFakeEnv(t, nil, withTemplate(makeProject("demo"), quotaSpec("1")), ns)
		e.reconcile(t, "demo")
		if c := e.ready(t, "demo"); c.Status != corev1.ConditionFalse || c.Reason != ReasonNamespaceNotOwned {
			t.Errorf("Ready = %+v, want False %s", c, ReasonNamespaceNotOwned)
		}
		if e.get(t, "demo", ResourceQuotaName, &corev1.ResourceQuota{}) {
			t.Error("a ResourceQuota was created in a namespace that is not the Project's")
		}
		e.get(t, "", "demo", ns)
		if _, ok := ns.Labels[ProjectLabelKey]; ok {
			t.Errorf("namespace labels %v: taken over", ns.Labels)
		}
	})
	t.Run("another project's namespace", func(t *testing.T) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Labels: map[string]string{ProjectLabelKey: "other"}}}
		e := newFakeEnv(t, nil, makeProject("demo"), ns)
		e.reconcile(t, "demo")
		if c := e.ready(t, "demo"); c.Reason != ReasonNamespaceNotOwned {
			t.Errorf("Ready = %+v, want %s", c, ReasonNamespaceNotOwned)
		}
	})
	t.Run("terminating namespace", func(t *testing.T) {
		now := metav1.Now()
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Labels: map[string]string{ProjectLabelKey: "demo"},
			DeletionTimestamp: &now, Finalizers: []string{"test/hold"}}}
		e := newFakeEnv(t, nil, makeProject("demo"), ns)
		e.reconcile(t, "demo")
		if c := e.ready(t, "demo"); c.Reason != ReasonNamespaceTerminating {
			t.Errorf("Ready = %+v, want %s", c, ReasonNamespaceTerminating)
		}
	})
	t.Run("unmarked quota", func(t *testing.T) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Labels: map[string]string{ProjectLabelKey: "demo"}}}
		rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: ResourceQuotaName}, Spec: quotaSpec("9")}
		e := newFakeEnv(t, nil, withTemplate(makeProject("demo"), quotaSpec("1")), ns, rq)
		e.reconcile(t, "demo")
		if c := e.ready(t, "demo"); c.Status != corev1.ConditionFalse || c.Reason != ReasonApplyFailed || !strings.Contains(c.Message, "is not the Project's") {
			t.Errorf("Ready = %+v, want False %s", c, ReasonApplyFailed)
		}
		if e.get(t, "demo", ResourceQuotaName, rq); !equality.Semantic.DeepEqual(rq.Spec, quotaSpec("9")) || len(rq.OwnerReferences) != 0 {
			t.Errorf("a foreign ResourceQuota was changed: %+v %v", rq.Spec, rq.OwnerReferences)
		}
	})
	t.Run("left by an earlier project", func(t *testing.T) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Labels: map[string]string{ProjectLabelKey: "demo"}}}
		rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: ResourceQuotaName,
			Labels:          map[string]string{ProjectLabelKey: "demo"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "tensorstack.dev/v1beta1", Kind: "Project", Name: "demo", UID: "old", Controller: ptrTo(true)}},
		}, Spec: quotaSpec("9")}
		p := withTemplate(makeProject("demo"), quotaSpec("1"))
		e := newFakeEnv(t, nil, p, ns, rq)
		e.reconcile(t, "demo")
		if c := e.ready(t, "demo"); c.Status != corev1.ConditionTrue {
			t.Errorf("Ready = %+v, want True", c)
		}
		e.get(t, "demo", ResourceQuotaName, rq)
		if !equality.Semantic.DeepEqual(rq.Spec, quotaSpec("1")) || !metav1.IsControlledBy(rq, p) {
			t.Errorf("ResourceQuota %+v owners %v, want taken back", rq.Spec, rq.OwnerReferences)
		}
	})
}

// TestReconcileReplacesRoleBinding: a binding of managed-project-sa that
// names another role is replaced, its role being immutable.
func TestReconcileReplacesRoleBinding(t *testing.T) {
	p := makeProject("demo")
	e := newFakeEnv(t, nil, p)
	e.reconcile(t, "demo")
	rb := &rbacv1.RoleBinding{}
	e.get(t, "demo", ServiceAccountName, rb)
	if err := e.c.Delete(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
	rb.ResourceVersion, rb.UID = "", ""
	rb.RoleRef.Name = "cluster-admin"
	if err := e.c.Create(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
	e.reconcile(t, "demo")
	e.get(t, "demo", ServiceAccountName, rb)
	if rb.RoleRef.Name != ServiceAccountClusterRole {
		t.Errorf("RoleBinding names %s, want %s", rb.RoleRef.Name, ServiceAccountClusterRole)
	}
	if c := e.ready(t, "demo"); c.Status != corev1.ConditionTrue {
		t.Errorf("Ready = %+v, want True", c)
	}
}

// TestFinalize: deleting a Project keeps its namespace unless the
// deletion was confirmed, and never deletes a namespace not its own.
func TestFinalize(t *testing.T) {
	for _, tc := range []struct {
		name        string
		confirm     string
		nsLabel     string
		wantDeleted bool
		wantEvent   string
	}{
		{name: "kept", nsLabel: "demo", wantEvent: ReasonNamespaceKept},
		{name: "confirmed", confirm: "true", nsLabel: "demo", wantDeleted: true, wantEvent: ReasonNamespaceDeleted},
		{name: "not true", confirm: "yes", nsLabel: "demo", wantEvent: ReasonNamespaceKept},
		{name: "confirmed but foreign", confirm: "true", nsLabel: "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := makeProject("demo")
			p.Finalizers = []string{Finalizer}
			if tc.confirm != "" {
				p.Annotations = map[string]string{DeleteNamespaceAnnotationKey: tc.confirm}
			}
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Labels: map[string]string{ProjectLabelKey: tc.nsLabel}}}
			e := newFakeEnv(t, nil, p, ns)
			if err := e.c.Delete(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			e.reconcile(t, "demo")
			if e.get(t, "", "demo", &tensorstackv1beta1.Project{}) {
				t.Error("the Project is still there: finalizer not removed")
			}
			if deleted := !e.get(t, "", "demo", ns); deleted != tc.wantDeleted {
				t.Errorf("namespace deleted = %v, want %v", deleted, tc.wantDeleted)
			}
			evs := strings.Join(e.events(), "\n")
			if tc.wantEvent != "" && !strings.Contains(evs, tc.wantEvent) {
				t.Errorf("events %q, want %s", evs, tc.wantEvent)
			}
		})
	}
}

// TestReconcileConflict: a conflict writing the status, from a cache
// behind the API server, is retried without an error or a status of it.
func TestReconcileConflict(t *testing.T) {
	conflicts := 1
	funcs := &interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		if conflicts > 0 {
			conflicts--
			return apierrors.NewConflict(schema.GroupResource{Group: "tensorstack.dev", Resource: "projects"}, obj.GetName(), errStaleTest)
		}
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}}
	e := newFakeEnv(t, funcs, makeProject("demo"))
	if res := e.reconcile(t, "demo"); res.RequeueAfter != conflictRetry {
		t.Errorf("RequeueAfter = %v, want %v", res.RequeueAfter, conflictRetry)
	}
	e.reconcile(t, "demo")
	if c := e.ready(t, "demo"); c.Status != corev1.ConditionTrue {
		t.Errorf("Ready = %+v after the retry, want True", c)
	}
}

var errStaleTest = staleError("the object has been modified")

type staleError string

func (e staleError) Error() string { return string(e) }

func ptrTo[T any](v T) *T { return &v }
