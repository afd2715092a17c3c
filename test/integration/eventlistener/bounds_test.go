package eventlistener

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener"
	"github.com/accelstack/accelstack/pkg/eventlistener/filter"
	"github.com/accelstack/accelstack/pkg/eventlistener/server"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
	"github.com/accelstack/accelstack/test/testutil"
)

// runnerAccount creates the service account managed-project-sa of ns with
// the rights a trigger needs: create and list WorkflowRuns.
func (e *env) runnerAccount(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "managed-project-sa"}},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workflowrun-creator"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"batch.tensorstack.dev"}, Resources: []string{"workflowruns"}, Verbs: []string{"create", "list"}}},
		},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workflowrun-creator"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "workflowrun-creator"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "managed-project-sa"}},
		},
	} {
		testutil.MustCreate(ctx, t, e.c, obj)
	}
}

// triggerServer returns the trigger server of wt as its Deployment
// configures it, creating runs as its service account.
func (e *env) triggerServer(ctx context.Context, t *testing.T, wt *triggersv1beta1.WorkflowTrigger) *server.Trigger {
	t.Helper()
	dep := e.waitDeployment(ctx, t, wt.Namespace, eventlistener.TriggerObjectName(wt.Name, wt.UID))
	config, _ := envValue(dep, serverconfig.EnvTriggerConfig)
	cfg, err := serverconfig.ParseTriggerConfig(config)
	if err != nil {
		t.Fatalf("the trigger Deployment's config: %v", err)
	}
	c, err := server.NewRunClient(e.serviceAccountConfig(t, wt.Namespace, dep.Spec.Template.Spec.ServiceAccountName))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := server.NewTrigger(cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// receive hands tr an event of the listener in ns and returns the HTTP
// status of its reply.
func receive(ctx context.Context, t *testing.T, tr *server.Trigger, ns, listener string) int {
	t.Helper()
	doc, err := filter.Document(http.Header{}, []byte(`{"hello": "world"}`))
	if err != nil {
		t.Fatal(err)
	}
	ev := cloudevents.NewEvent()
	ev.SetID("event")
	ev.SetSource(serverconfig.Source(ns, listener))
	ev.SetType(server.EventType)
	if err := ev.SetData(cloudevents.ApplicationJSON, doc); err != nil {
		t.Fatal(err)
	}
	res := tr.Receive(ctx, ev)
	if cloudevents.IsACK(res) {
		return http.StatusOK
	}
	var hres *cehttp.Result
	if errors.As(res, &hres) {
		return hres.StatusCode
	}
	t.Fatalf("reply %v", res)
	return 0
}

// finish sets the phase of run ns/name to Succeeded at completion time
// when, as the workflow controller does when it ends.
func (e *env) finish(ctx context.Context, t *testing.T, ns, name string, when time.Time) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		run := &batchv1beta1.WorkflowRun{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
			return err
		}
		run.Status.Phase = batchv1beta1.NodeSucceeded
		run.Status.CompletionTime = ptr.To(metav1.NewTime(when))
		return e.c.Status().Update(ctx, run)
	})
	if err != nil {
		t.Fatalf("finishing run %s: %v", name, err)
	}
}

// testRunsBounded: a trigger's runs are owned by it; past maxLiveRuns runs
// not finished an event gets 429 and starts none; once runs finish, the
// controller deletes those beyond runsHistoryLimit, the first finished
// first.
func (e *env) testRunsBounded(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.runnerAccount(ctx, t, ns)
	// A template whose run waits for its pod, which no kubelet runs.
	testutil.MustCreate(ctx, t, e.c, &batchv1beta1.WorkflowTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workflow-template-sample"},
		Spec: batchv1beta1.WorkflowTemplateSpec{
			Params: []batchv1beta1.ParamSpec{{Name: "message"}, {Name: "event", Default: ptr.To("")}},
			Pod:    &batchv1beta1.PodWorkflowTemplate{PodSpec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "ubuntu", Args: []string{"$(params.message)"}}}}},
		},
	})
	el := listener(ns, "event-listener-sample")
	testutil.MustCreate(ctx, t, e.c, el)
	wt := trigger(ns, "workflow-trigger-sample", triggersv1beta1.EventSource{EventListenerName: el.Name})
	wt.Spec.MaxLiveRuns, wt.Spec.RunsHistoryLimit = ptr.To[int32](1), ptr.To[int32](1)
	testutil.MustCreate(ctx, t, e.c, wt)
	tr := e.triggerServer(ctx, t, wt)

	if code := receive(ctx, t, tr, ns, el.Name); code != http.StatusOK {
		t.Fatalf("the first event: %d", code)
	}
	runs := e.runs(ctx, t, ns)
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	first := runs[0]
	if ref := metav1.GetControllerOf(&first); ref == nil || ref.UID != wt.UID || ref.Kind != "WorkflowTrigger" {
		t.Errorf("run owner %+v, want the WorkflowTrigger %s", ref, wt.UID)
	}
	if code := receive(ctx, t, tr, ns, el.Name); code != http.StatusTooManyRequests {
		t.Errorf("an event while a run is not finished, maxLiveRuns 1: %d, want 429", code)
	}
	if n := len(e.runs(ctx, t, ns)); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}

	// Completion times have seconds: the first finished a minute earlier.
	e.finish(ctx, t, ns, first.Name, time.Now().Add(-time.Minute))
	if code := receive(ctx, t, tr, ns, el.Name); code != http.StatusOK {
		t.Fatalf("an event once the run finished: %d", code)
	}
	var second string
	for _, r := range e.runs(ctx, t, ns) {
		if r.Name != first.Name {
			second = r.Name
		}
	}
	if second == "" {
		t.Fatal("no second run")
	}
	e.finish(ctx, t, ns, second, time.Now())
	testutil.Poll(ctx, t, "the first run deleted beyond the history limit", func() (bool, string, error) {
		var names []string
		for _, r := range e.runs(ctx, t, ns) {
			names = append(names, r.Name)
		}
		return len(names) == 1 && names[0] == second, fmt.Sprint(names), nil
	})
}

// testTriggerNetworkPolicy: a trigger's pods get a NetworkPolicy admitting
// only its listener's pods, matched by the labels the listener's pod
// template has. Whether it is enforced is the CNI's matter, which envtest
// has none of.
func (e *env) testTriggerNetworkPolicy(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	el := listener(ns, "event-listener-sample")
	testutil.MustCreate(ctx, t, e.c, el)
	wt := trigger(ns, "workflow-trigger-sample", triggersv1beta1.EventSource{EventListenerName: el.Name})
	testutil.MustCreate(ctx, t, e.c, wt)
	name := eventlistener.TriggerObjectName(wt.Name, wt.UID)
	np := &networkingv1.NetworkPolicy{}
	e.waitFor(ctx, t, ns, name, np)
	if ref := metav1.GetControllerOf(np); ref == nil || ref.UID != wt.UID {
		t.Errorf("owner %+v, want the trigger", ref)
	}
	tdep := e.waitDeployment(ctx, t, ns, name)
	ldep := e.waitDeployment(ctx, t, ns, eventlistener.ListenerObjectName(el.Name, el.UID))
	selects := func(sel *metav1.LabelSelector, podLabels map[string]string) bool {
		s, err := metav1.LabelSelectorAsSelector(sel)
		return err == nil && s.Matches(labels.Set(podLabels))
	}
	if !selects(&np.Spec.PodSelector, tdep.Spec.Template.Labels) {
		t.Errorf("the policy's pod selector %v does not select the trigger's pods %v", np.Spec.PodSelector, tdep.Spec.Template.Labels)
	}
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 1 || np.Spec.Ingress[0].From[0].NamespaceSelector != nil ||
		!selects(np.Spec.Ingress[0].From[0].PodSelector, ldep.Spec.Template.Labels) {
		t.Errorf("ingress %+v, want only the listener's pods %v", np.Spec.Ingress, ldep.Spec.Template.Labels)
	}
}
