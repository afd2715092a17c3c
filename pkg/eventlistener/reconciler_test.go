package eventlistener

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// fixture is a fake cluster and the two reconcilers over it.
type fixture struct {
	c        client.Client
	listener *ListenerReconciler
	trigger  *TriggerReconciler
}

func newFixture(t *testing.T, objs ...client.Object) *fixture {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, triggersv1beta1.AddToScheme, batchv1beta1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(&triggersv1beta1.EventListener{}, &triggersv1beta1.WorkflowTrigger{}).Build()
	opts := Options{Image: "registry.example/workflow-events:v1", ExternalHost: "t9k.example.com"}
	rec := events.NewFakeRecorder(100)
	return &fixture{c: c, listener: NewListenerReconciler(c, c, c, rec, opts), trigger: NewTriggerReconciler(c, c, c, rec, opts)}
}

func (f *fixture) reconcileListener(t *testing.T, name string) {
	t.Helper()
	if _, err := f.listener.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "demo", Name: name}}); err != nil {
		t.Fatalf("reconciling listener %s: %v", name, err)
	}
}

func (f *fixture) reconcileTrigger(t *testing.T, name string) {
	t.Helper()
	if _, err := f.trigger.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "demo", Name: name}}); err != nil {
		t.Fatalf("reconciling trigger %s: %v", name, err)
	}
}

func (f *fixture) get(t *testing.T, name string, obj client.Object) {
	t.Helper()
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: "demo", Name: name}, obj); err != nil {
		t.Fatal(err)
	}
}

func newListener(name string) *triggersv1beta1.EventListener {
	return &triggersv1beta1.EventListener{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, UID: types.UID(name + "-uid")}}
}

func newTrigger(name string, listeners ...string) *triggersv1beta1.WorkflowTrigger {
	wt := &triggersv1beta1.WorkflowTrigger{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, UID: types.UID(name + "-uid")},
		Spec: triggersv1beta1.WorkflowTriggerSpec{
			ServiceAccountName: "managed-project-sa",
			WorkflowRunSpec: batchv1beta1.WorkflowRunSpec{
				WorkflowTemplateRef: "workflow-template-sample",
				Params:              []batchv1beta1.Param{{Name: "message", Value: "$(body.hello)"}},
			},
		},
	}
	for _, l := range listeners {
		wt.Spec.EventSources = append(wt.Spec.EventSources, triggersv1beta1.EventSource{EventListenerName: l})
	}
	return wt
}

func envOf(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

func readyCond(t *testing.T, conds []triggersv1beta1.Condition) triggersv1beta1.Condition {
	t.Helper()
	for _, c := range conds {
		if c.Type == triggersv1beta1.ConditionReady {
			return c
		}
	}
	t.Fatalf("no Ready condition in %+v", conds)
	return triggersv1beta1.Condition{}
}

func TestListenerObjects(t *testing.T) {
	el := newListener("event-listener-sample")
	f := newFixture(t, el)
	f.reconcileListener(t, el.Name)
	name := ListenerObjectName(el.Name, el.UID)

	dep := &appsv1.Deployment{}
	f.get(t, name, dep)
	if !metav1.IsControlledBy(dep, el) {
		t.Errorf("Deployment owners %+v", dep.OwnerReferences)
	}
	if got := ptr.Deref(dep.Spec.Replicas, -1); got != 1 {
		t.Errorf("replicas %d, want 1", got)
	}
	wantLabels := map[string]string{
		WorkflowEventsLabelKey: name, serverconfig.EventListenerLabelKey: el.Name,
		"app.kubernetes.io/name": "workflow-events", "app.kubernetes.io/component": "event-listener",
	}
	if diff := cmp.Diff(wantLabels, dep.Spec.Template.Labels); diff != "" {
		t.Errorf("pod labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{WorkflowEventsLabelKey: name}, dep.Spec.Selector.MatchLabels); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	pod := dep.Spec.Template.Spec
	if ptr.Deref(pod.AutomountServiceAccountToken, true) || !ptr.Deref(pod.SecurityContext.RunAsNonRoot, false) || pod.ServiceAccountName != "" {
		t.Errorf("pod: token %v, non-root %v, service account %q", pod.AutomountServiceAccountToken, pod.SecurityContext.RunAsNonRoot, pod.ServiceAccountName)
	}
	ctr := pod.Containers[0]
	if ctr.Image != "registry.example/workflow-events:v1" || !cmp.Equal(ctr.Args, []string{"listen"}) {
		t.Errorf("container image %s args %v", ctr.Image, ctr.Args)
	}
	if !ptr.Deref(ctr.SecurityContext.ReadOnlyRootFilesystem, false) || ptr.Deref(ctr.SecurityContext.AllowPrivilegeEscalation, true) {
		t.Errorf("container security context %+v", ctr.SecurityContext)
	}
	if ctr.ReadinessProbe.HTTPGet.Path != "/readyz" || ctr.LivenessProbe.HTTPGet.Path != "/healthz" || ctr.Ports[0].ContainerPort != 8080 {
		t.Errorf("probes %+v %+v ports %+v", ctr.ReadinessProbe, ctr.LivenessProbe, ctr.Ports)
	}
	if diff := cmp.Diff(DefaultResources(), ctr.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	wantEnv := map[string]string{serverconfig.EnvListenerNamespace: "demo", serverconfig.EnvListenerName: el.Name, serverconfig.EnvSubscribers: ""}
	if diff := cmp.Diff(wantEnv, envOf(ctr)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}

	svc := &corev1.Service{}
	f.get(t, name, svc)
	if !metav1.IsControlledBy(svc, el) || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.StrVal != "http" || svc.Spec.Selector[WorkflowEventsLabelKey] != name {
		t.Errorf("Service %+v", svc)
	}

	f.get(t, el.Name, el)
	want := &triggersv1beta1.EventListenerAddress{
		InClusterURL: "http://" + name + ".demo.svc.cluster.local",
		URL:          "https://t9k.example.com/t9k/workflow/triggers/demo/event-listener-sample",
	}
	if diff := cmp.Diff(want, el.Status.Address); diff != "" {
		t.Errorf("address (-want +got):\n%s", diff)
	}
	if r := readyCond(t, el.Status.Conditions); r.Status != corev1.ConditionUnknown {
		t.Errorf("Ready %+v before the Deployment is available", r)
	}

	// The deployment controller makes it available.
	dep.Status.AvailableReplicas = 1
	dep.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}
	if err := f.c.Status().Update(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	f.reconcileListener(t, el.Name)
	f.get(t, el.Name, el)
	if r := readyCond(t, el.Status.Conditions); r.Status != corev1.ConditionTrue || r.Message != "The EventListener is Ready" {
		t.Errorf("Ready %+v once the Deployment is available", r)
	}
}

func TestListenerSubscribersAndSpec(t *testing.T) {
	el := newListener("l")
	el.Spec.Replicas = ptr.To[int32](3)
	t1, t2, other, invalid := newTrigger("t1", "l"), newTrigger("t2", "x", "l"), newTrigger("t3", "x"), newTrigger("bad", "l")
	invalid.Spec.EventSources[0].Filters = []triggersv1beta1.Filter{{Path: "nobody", Type: triggersv1beta1.JSONString, Values: []string{"a"}}}
	f := newFixture(t, el, t1, other, invalid)
	f.reconcileListener(t, "l")
	name := ListenerObjectName("l", el.UID)
	dep := &appsv1.Deployment{}
	f.get(t, name, dep)
	url1 := "http://" + TriggerObjectName("t1", t1.UID) + ".demo.svc.cluster.local:8080"
	if got := envOf(dep.Spec.Template.Spec.Containers[0])[serverconfig.EnvSubscribers]; got != url1 {
		t.Errorf("subscribers %q, want %q", got, url1)
	}
	if got := ptr.Deref(dep.Spec.Replicas, -1); got != 3 {
		t.Errorf("replicas %d, want 3", got)
	}

	// A second trigger and new resources update the Deployment.
	if err := f.c.Create(context.Background(), t2); err != nil {
		t.Fatal(err)
	}
	f.get(t, "l", el)
	el.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	if err := f.c.Update(context.Background(), el); err != nil {
		t.Fatal(err)
	}
	f.reconcileListener(t, "l")
	f.get(t, name, dep)
	ctr := dep.Spec.Template.Spec.Containers[0]
	urls := []string{url1, "http://" + TriggerObjectName("t2", t2.UID) + ".demo.svc.cluster.local:8080"}
	slices.Sort(urls)
	if got, want := envOf(ctr)[serverconfig.EnvSubscribers], strings.Join(urls, ","); got != want {
		t.Errorf("subscribers %q, want %q", got, want)
	}
	if diff := cmp.Diff(*el.Spec.Resources, ctr.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
}

func TestTriggerObjects(t *testing.T) {
	wt := newTrigger("workflow-trigger-sample", "event-listener-sample", "missing")
	f := newFixture(t, wt, newListener("event-listener-sample"))
	f.reconcileTrigger(t, wt.Name)
	name := TriggerObjectName(wt.Name, wt.UID)

	dep := &appsv1.Deployment{}
	f.get(t, name, dep)
	pod := dep.Spec.Template.Spec
	if pod.ServiceAccountName != "managed-project-sa" || !ptr.Deref(pod.AutomountServiceAccountToken, false) {
		t.Errorf("pod service account %q token %v", pod.ServiceAccountName, pod.AutomountServiceAccountToken)
	}
	ctr := pod.Containers[0]
	if !cmp.Equal(ctr.Args, []string{"trigger"}) || pod.Containers[0].Name != "trigger" {
		t.Errorf("container %s args %v", ctr.Name, ctr.Args)
	}
	cfg, err := serverconfig.ParseTriggerConfig(envOf(ctr)[serverconfig.EnvTriggerConfig])
	if err != nil {
		t.Fatalf("the trigger config: %v", err)
	}
	wantCfg := serverconfig.TriggerConfig{Namespace: "demo", Name: wt.Name, UID: wt.UID, EventSources: wt.Spec.EventSources, WorkflowRunSpec: wt.Spec.WorkflowRunSpec,
		MaxLiveRuns: triggersv1beta1.DefaultMaxLiveRuns}
	if diff := cmp.Diff(wantCfg, cfg); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	svc := &corev1.Service{}
	f.get(t, name, svc)
	// Headless, so that listeners reach the pods without kube-proxy.
	if !metav1.IsControlledBy(svc, wt) || svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Ports[0].Port != 8080 {
		t.Errorf("Service %+v", svc)
	}

	f.get(t, wt.Name, wt)
	r := readyCond(t, wt.Status.Conditions)
	if r.Status != corev1.ConditionFalse || r.Reason != ReasonEventListenerNotFound || r.Message != "EventListener missing not found in namespace demo" {
		t.Errorf("Ready %+v with a listener missing", r)
	}

	// The listener appears, the Deployment becomes available.
	if err := f.c.Create(context.Background(), newListener("missing")); err != nil {
		t.Fatal(err)
	}
	dep.Status.AvailableReplicas = 1
	dep.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}
	if err := f.c.Status().Update(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	f.reconcileTrigger(t, wt.Name)
	f.get(t, wt.Name, wt)
	if r := readyCond(t, wt.Status.Conditions); r.Status != corev1.ConditionTrue || r.Message != "The WorkflowTrigger is Ready" {
		t.Errorf("Ready %+v", r)
	}
}

func TestInvalidTrigger(t *testing.T) {
	wt := newTrigger("bad")
	f := newFixture(t, wt)
	f.reconcileTrigger(t, wt.Name)
	err := f.c.Get(context.Background(), types.NamespacedName{Namespace: "demo", Name: TriggerObjectName(wt.Name, wt.UID)}, &appsv1.Deployment{})
	if err == nil {
		t.Error("an invalid trigger got a Deployment")
	}
	f.get(t, wt.Name, wt)
	if r := readyCond(t, wt.Status.Conditions); r.Status != corev1.ConditionFalse || r.Reason != ReasonInvalidSpec {
		t.Errorf("Ready %+v", r)
	}
}

func TestMapFuncs(t *testing.T) {
	t1, t2 := newTrigger("t1", "a", "b", "a"), newTrigger("t2", "b")
	f := newFixture(t, t1, t2)
	got := f.listener.triggerListeners(context.Background(), t1)
	want := []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: "demo", Name: "a"}}, {NamespacedName: types.NamespacedName{Namespace: "demo", Name: "b"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trigger to listeners (-want +got):\n%s", diff)
	}
	got = f.trigger.listenerTriggers(context.Background(), newListener("b"))
	want = []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: "demo", Name: "t1"}}, {NamespacedName: types.NamespacedName{Namespace: "demo", Name: "t2"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listener to triggers (-want +got):\n%s", diff)
	}
}

func TestNameTaken(t *testing.T) {
	el := newListener("l")
	name := ListenerObjectName(el.Name, el.UID)
	foreign := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}}
	f := newFixture(t, el, foreign)
	// The cache sees nothing, as it sees only labelled objects.
	empty := fake.NewClientBuilder().WithScheme(f.c.Scheme()).Build()
	f.listener.objects.reader = empty
	res, err := f.listener.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "demo", Name: "l"}})
	if err == nil || !strings.Contains(err.Error(), "is not l's") || res.RequeueAfter != 0 {
		t.Errorf("Reconcile with a foreign Deployment = %+v, %v, want an error naming it", res, err)
	}
	f.get(t, "l", el)
	if r := readyCond(t, el.Status.Conditions); r.Status != corev1.ConditionFalse || r.Reason != ReasonDeploymentFailed {
		t.Errorf("Ready %+v", r)
	}

	// The listener's own Deployment that the cache has not seen yet.
	f2 := newFixture(t, newListener("l"))
	f2.reconcileListener(t, "l")
	f2.listener.objects.reader = empty
	res, err = f2.listener.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "demo", Name: "l"}})
	if err != nil || res.RequeueAfter == 0 {
		t.Errorf("Reconcile with a stale cache = %+v, %v, want a quiet retry", res, err)
	}
}
