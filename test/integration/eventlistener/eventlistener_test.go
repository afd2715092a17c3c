package eventlistener

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener"
	"github.com/accelstack/accelstack/pkg/eventlistener/filter"
	"github.com/accelstack/accelstack/pkg/eventlistener/server"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
	"github.com/accelstack/accelstack/test/testutil"
)

// TestEventListener runs every test against one control plane.
func TestEventListener(t *testing.T) {
	e := startEnv(t)
	t.Run("Listener", e.testListener)
	t.Run("Trigger", e.testTrigger)
	t.Run("InvalidTrigger", e.testInvalidTrigger)
	t.Run("Runs", e.testRuns)
	t.Run("RunsBounded", e.testRunsBounded)
	t.Run("TriggerNetworkPolicy", e.testTriggerNetworkPolicy)
	t.Run("ListenerAuth", e.testListenerAuth)

	// Stale reads and conflicts are retried quietly, not reported.
	for _, line := range strings.Split(e.controllers.Log(), "\n") {
		if strings.Contains(line, "Reconciler error") && (strings.Contains(line, `"eventlistener"`) || strings.Contains(line, `"workflowtrigger"`)) {
			t.Errorf("the controllers failed: %s", line)
		}
	}
}

// listener is an EventListener with the seed's spec.
func listener(ns, name string) *triggersv1beta1.EventListener {
	return &triggersv1beta1.EventListener{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       triggersv1beta1.EventListenerSpec{Replicas: ptr.To[int32](1)},
	}
}

// trigger is a WorkflowTrigger of the seed's quick start: the param
// message from the body's hello, run as managed-project-sa.
func trigger(ns, name string, sources ...triggersv1beta1.EventSource) *triggersv1beta1.WorkflowTrigger {
	return &triggersv1beta1.WorkflowTrigger{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: triggersv1beta1.WorkflowTriggerSpec{
			EventSources:       sources,
			ServiceAccountName: "managed-project-sa",
			WorkflowRunSpec: batchv1beta1.WorkflowRunSpec{
				WorkflowTemplateRef: "workflow-template-sample",
				Params:              []batchv1beta1.Param{{Name: "message", Value: "$(body.hello)"}, {Name: "event", Value: "$(header.X-Gitlab-Event)"}},
			},
		},
	}
}

// testListener: a listener gets a Deployment and Service of the seed's
// name, non-root and without a token, its in-cluster URL, and a Ready
// condition that follows the Deployment.
func (e *env) testListener(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	el := listener(ns, "event-listener-sample")
	el.Spec.Replicas = nil // the CRD's default
	testutil.MustCreate(ctx, t, e.c, el)
	name := eventlistener.ListenerObjectName(el.Name, el.UID)
	if !regexp.MustCompile(`^event-listener-sample-eventlistener-[0-9a-f]{5}$`).MatchString(name) {
		t.Errorf("objects named %q, want the seed's <listener>-eventlistener-<5 hex>", name)
	}
	dep := e.waitDeployment(ctx, t, ns, name)
	if !metav1.IsControlledBy(dep, el) || ptr.Deref(dep.Spec.Replicas, 0) != 1 {
		t.Errorf("Deployment owners %v replicas %v", dep.OwnerReferences, dep.Spec.Replicas)
	}
	pod := dep.Spec.Template.Spec
	ctr := pod.Containers[0]
	if ctr.Image != eventlistener.DefaultImage || !cmp.Equal(ctr.Args, []string{"listen"}) {
		t.Errorf("container image %s args %v", ctr.Image, ctr.Args)
	}
	if ptr.Deref(pod.AutomountServiceAccountToken, true) || !ptr.Deref(pod.SecurityContext.RunAsNonRoot, false) || !ptr.Deref(ctr.SecurityContext.ReadOnlyRootFilesystem, false) {
		t.Errorf("pod token %v non-root %v read-only root %v", pod.AutomountServiceAccountToken, pod.SecurityContext.RunAsNonRoot, ctr.SecurityContext.ReadOnlyRootFilesystem)
	}
	if diff := cmp.Diff(eventlistener.DefaultResources(), ctr.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	svc := &corev1.Service{}
	e.waitFor(ctx, t, ns, name, svc)
	if !metav1.IsControlledBy(svc, el) || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.String() != "http" {
		t.Errorf("Service owners %v ports %+v", svc.OwnerReferences, svc.Spec.Ports)
	}

	el = e.waitListenerReady(ctx, t, ns, el.Name, corev1.ConditionUnknown)
	want := &triggersv1beta1.EventListenerAddress{InClusterURL: "http://" + name + "." + ns + ".svc.cluster.local"}
	if diff := cmp.Diff(want, el.Status.Address); diff != "" {
		t.Errorf("address (-want +got):\n%s", diff)
	}

	e.setAvailable(ctx, t, ns, name, true)
	el = e.waitListenerReady(ctx, t, ns, el.Name, corev1.ConditionTrue)
	if r := readyOf(el.Status.Conditions); r.Reason != eventlistener.ReasonDeploymentAvailable || r.Message != "The EventListener is Ready" {
		t.Errorf("Ready %+v", r)
	}
	e.setAvailable(ctx, t, ns, name, false)
	el = e.waitListenerReady(ctx, t, ns, el.Name, corev1.ConditionFalse)
	if r := readyOf(el.Status.Conditions); r.Reason != eventlistener.ReasonDeploymentUnavailable {
		t.Errorf("Ready %+v", r)
	}
}

// testTrigger: a trigger naming a listener that does not exist is not
// Ready and says which; once the listener exists the trigger follows its
// Deployment, and the listener's Deployment delivers to the trigger's
// Service.
func (e *env) testTrigger(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	wt := trigger(ns, "workflow-trigger-sample", triggersv1beta1.EventSource{EventListenerName: "later"})
	testutil.MustCreate(ctx, t, e.c, wt)
	r := e.waitTriggerReady(ctx, t, ns, wt.Name, corev1.ConditionFalse, eventlistener.ReasonEventListenerNotFound)
	if !strings.Contains(r.Message, "later") {
		t.Errorf("Ready message %q does not name the missing listener", r.Message)
	}
	name := eventlistener.TriggerObjectName(wt.Name, wt.UID)
	dep := e.waitDeployment(ctx, t, ns, name)
	pod := dep.Spec.Template.Spec
	if pod.ServiceAccountName != "managed-project-sa" || !ptr.Deref(pod.AutomountServiceAccountToken, false) || !cmp.Equal(pod.Containers[0].Args, []string{"trigger"}) {
		t.Errorf("trigger pod: service account %q token %v args %v", pod.ServiceAccountName, pod.AutomountServiceAccountToken, pod.Containers[0].Args)
	}
	e.waitFor(ctx, t, ns, name, &corev1.Service{})

	el := listener(ns, "later")
	testutil.MustCreate(ctx, t, e.c, el)
	e.waitTriggerReady(ctx, t, ns, wt.Name, corev1.ConditionUnknown, eventlistener.ReasonDeploymentProgressing)
	e.setAvailable(ctx, t, ns, name, true)
	e.waitTriggerReady(ctx, t, ns, wt.Name, corev1.ConditionTrue, eventlistener.ReasonDeploymentAvailable)

	// The trigger's Service is headless: the listener reaches its pods at
	// their own port.
	url := "http://" + name + "." + ns + ".svc.cluster.local:8080"
	testutil.Poll(ctx, t, "the listener's subscribers", func() (bool, string, error) {
		dep := e.waitDeployment(ctx, t, ns, eventlistener.ListenerObjectName(el.Name, el.UID))
		got, _ := envValue(dep, serverconfig.EnvSubscribers)
		return got == url, got, nil
	})

	// Without the trigger, the listener delivers to nobody.
	if err := e.c.Delete(ctx, wt); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(ctx, t, "the listener's subscribers once the trigger is gone", func() (bool, string, error) {
		dep := e.waitDeployment(ctx, t, ns, eventlistener.ListenerObjectName(el.Name, el.UID))
		got, ok := envValue(dep, serverconfig.EnvSubscribers)
		return ok && got == "", got, nil
	})
}

// testInvalidTrigger: a trigger whose filter the schema lets through but
// ValidateTrigger refuses gets no Deployment and says why.
func (e *env) testInvalidTrigger(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	wt := trigger(ns, "bad", triggersv1beta1.EventSource{
		EventListenerName: "l",
		Filters:           []triggersv1beta1.Filter{{Path: "labels.0.id", Type: triggersv1beta1.JSONNumber, Values: []string{"two"}}},
	})
	testutil.MustCreate(ctx, t, e.c, wt)
	r := e.waitTriggerReady(ctx, t, ns, wt.Name, corev1.ConditionFalse, eventlistener.ReasonInvalidSpec)
	for _, want := range []string{"spec.eventSources[0].filters[0].path", "spec.eventSources[0].filters[0].values[0]"} {
		if !strings.Contains(r.Message, want) {
			t.Errorf("Ready message %q does not name %s", r.Message, want)
		}
	}
	err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: eventlistener.TriggerObjectName(wt.Name, wt.UID)}, &appsv1.Deployment{})
	if err == nil {
		t.Error("an invalid trigger got a Deployment")
	}
}

// serviceAccountConfig returns a config of the API server that
// authenticates as the service account ns/name.
func (e *env) serviceAccountConfig(t *testing.T, ns, name string) *rest.Config {
	t.Helper()
	user, err := e.cp.Env.AddUser(envtest.User{
		Name:   "system:serviceaccount:" + ns + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return user.Config()
}

// runs returns the WorkflowRuns of ns.
func (e *env) runs(ctx context.Context, t *testing.T, ns string) []batchv1beta1.WorkflowRun {
	t.Helper()
	var list batchv1beta1.WorkflowRunList
	if err := e.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// testRuns: the servers of workflow-events, in-process and configured as
// the controller configured their Deployments, turn a JSON POST into a
// WorkflowRun of the seed's name with the body's and header's values as
// params, created as the trigger's service account; an event that fails a
// filter starts none, and an account that may not create runs creates none.
func (e *env) testRuns(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.runnerAccount(ctx, t, ns)
	el := listener(ns, "event-listener-sample")
	testutil.MustCreate(ctx, t, e.c, el)
	wt := trigger(ns, "workflow-trigger-sample", triggersv1beta1.EventSource{
		EventListenerName: el.Name,
		Filters:           []triggersv1beta1.Filter{{Path: "body.object_kind", Type: triggersv1beta1.JSONString, Values: []string{"merge_request"}}},
	})
	testutil.MustCreate(ctx, t, e.c, wt)

	// The trigger server, as its Deployment configures it, as its
	// service account.
	tdep := e.waitDeployment(ctx, t, ns, eventlistener.TriggerObjectName(wt.Name, wt.UID))
	config, _ := envValue(tdep, serverconfig.EnvTriggerConfig)
	tcfg, err := serverconfig.ParseTriggerConfig(config)
	if err != nil {
		t.Fatalf("the trigger Deployment's config: %v", err)
	}
	runClient, err := server.NewRunClient(e.serviceAccountConfig(t, ns, tdep.Spec.Template.Spec.ServiceAccountName))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := server.NewTrigger(tcfg, runClient)
	if err != nil {
		t.Fatal(err)
	}
	h, err := tr.Handler(ctx, server.DefaultMaxEventBytes)
	if err != nil {
		t.Fatal(err)
	}
	triggerSrv := httptest.NewServer(h)
	defer triggerSrv.Close()

	// The listener server, as its Deployment configures it, delivering to
	// the trigger server rather than the trigger's Service.
	var ldep *appsv1.Deployment
	testutil.Poll(ctx, t, "the listener's subscribers", func() (bool, string, error) {
		ldep = e.waitDeployment(ctx, t, ns, eventlistener.ListenerObjectName(el.Name, el.UID))
		got, _ := envValue(ldep, serverconfig.EnvSubscribers)
		return got == "http://"+eventlistener.TriggerObjectName(wt.Name, wt.UID)+"."+ns+".svc.cluster.local:8080", got, nil
	})
	lcfg := server.DefaultListenerConfig()
	lcfg.Namespace, _ = envValue(ldep, serverconfig.EnvListenerNamespace)
	lcfg.Name, _ = envValue(ldep, serverconfig.EnvListenerName)
	lcfg.Subscribers = []string{triggerSrv.URL}
	sender, err := server.NewSender(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	l, err := server.NewListener(lcfg, sender)
	if err != nil {
		t.Fatal(err)
	}
	listenerSrv := httptest.NewServer(server.Mux(l, readyFlag()))
	defer listenerSrv.Close()

	post := func(body string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, listenerSrv.URL+serverconfig.Source(ns, el.Name), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded") // curl -d, as the seed posts
		req.Header.Set("X-Gitlab-Event", "Merge Request Hook")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the listener replied %d", resp.StatusCode)
		}
	}
	post(`{"object_kind": "push", "hello": "filtered out"}`)
	post(`{"object_kind": "merge_request", "hello": "world"}`)
	l.Close(ctx) // every delivery is done

	got := e.runs(ctx, t, ns)
	if len(got) != 1 {
		t.Fatalf("%d runs, want 1 (one event filtered out)", len(got))
	}
	run := got[0]
	if !regexp.MustCompile(`^event-listener-sample-workflow-trigger-sample-[0-9a-f]{5}$`).MatchString(run.Name) {
		t.Errorf("run %q, want the seed's <listener>-<trigger>-<5 hex>", run.Name)
	}
	wantParams := []batchv1beta1.Param{{Name: "message", Value: "world"}, {Name: "event", Value: "Merge Request Hook"}}
	if diff := cmp.Diff(wantParams, run.Spec.Params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	// The workflow controller may add labels of its own.
	for key, want := range map[string]string{serverconfig.WorkflowTriggerLabelKey: wt.Name, serverconfig.EventListenerLabelKey: el.Name} {
		if got := run.Labels[key]; got != want {
			t.Errorf("label %s=%q, want %q", key, got, want)
		}
	}
	if run.Spec.WorkflowTemplateRef != "workflow-template-sample" || run.Annotations[serverconfig.EventIDAnnotationKey] == "" {
		t.Errorf("run template %q annotations %v", run.Spec.WorkflowTemplateRef, run.Annotations)
	}

	// An account without the Role creates nothing, and the listener is
	// told not to retry.
	strangerClient, err := server.NewRunClient(e.serviceAccountConfig(t, ns, "stranger"))
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := server.NewTrigger(tcfg, strangerClient)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := filter.Document(http.Header{}, []byte(`{"object_kind": "merge_request"}`))
	if err != nil {
		t.Fatal(err)
	}
	ev := cloudevents.NewEvent()
	ev.SetID("forbidden-1")
	ev.SetSource(serverconfig.Source(ns, el.Name))
	ev.SetType(server.EventType)
	if err := ev.SetData(cloudevents.ApplicationJSON, doc); err != nil {
		t.Fatal(err)
	}
	res := stranger.Receive(ctx, ev)
	var hres *cehttp.Result
	if !errors.As(res, &hres) || hres.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a run refused as forbidden: %v, want 422", res)
	}
	if n := len(e.runs(ctx, t, ns)); n != 1 {
		t.Errorf("%d runs after a forbidden create, want 1", n)
	}
}
