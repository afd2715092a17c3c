package server

import (
	"context"
	"errors"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// receiver returns the trigger of cfg over c and a function handing it an
// event that passes the filters of triggerConfig, returning the reply's
// status.
func receiver(t *testing.T, cfg serverconfig.TriggerConfig, c client.Client) func() int {
	t.Helper()
	tr, err := NewTrigger(cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	ev := newEvent(t, serverconfig.Source("demo", "event-listener-sample"), gitlabHeader(), `{"object_kind": "merge_request"}`)
	return func() int { return statusOf(tr.Receive(context.Background(), ev)) }
}

func TestTriggerRateLimit(t *testing.T) {
	cfg := triggerConfig()
	cfg.Rate, cfg.Burst = 0.001, 2
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).Build()
	receive := receiver(t, cfg, c)
	var got []int
	for range 4 {
		got = append(got, receive())
	}
	want := []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests, http.StatusTooManyRequests}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("replies %v, want %v", got, want)
		}
	}
	if n := len(runs(t, c)); n != 2 {
		t.Errorf("%d runs, want 2", n)
	}
}

func TestTriggerMaxLiveRuns(t *testing.T) {
	cfg := triggerConfig()
	cfg.UID, cfg.MaxLiveRuns = "trigger-uid", 2
	run := func(name, uid string, phase batchv1beta1.NodePhase) *batchv1beta1.WorkflowRun {
		r := &batchv1beta1.WorkflowRun{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, Labels: map[string]string{serverconfig.WorkflowTriggerUIDLabelKey: uid}}}
		r.Status.Phase = phase
		return r
	}
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(
		run("running", "trigger-uid", batchv1beta1.NodeRunning),
		run("done", "trigger-uid", batchv1beta1.NodeSucceeded),
		run("failed", "trigger-uid", batchv1beta1.NodeFailed),
		run("another-trigger", "other-uid", batchv1beta1.NodeRunning),
	).Build()
	ctx := context.Background()
	receive := receiver(t, cfg, c)
	// One run not finished: one more fits, then the trigger is full.
	if code := receive(); code != http.StatusOK {
		t.Fatalf("with 1 run not finished of 2: %d", code)
	}
	if code := receive(); code != http.StatusTooManyRequests {
		t.Fatalf("with 2 runs not finished of 2: %d, want 429", code)
	}
	if n := len(runs(t, c)); n != 5 {
		t.Errorf("%d runs, want 5", n)
	}
	// A run that finishes makes room.
	r := &batchv1beta1.WorkflowRun{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "running"}, r); err != nil {
		t.Fatal(err)
	}
	r.Status.Phase = batchv1beta1.NodeSucceeded
	if err := c.Update(ctx, r); err != nil {
		t.Fatal(err)
	}
	if code := receive(); code != http.StatusOK {
		t.Errorf("after a run finished: %d", code)
	}
}

// TestTriggerCreateOnly: a service account that may create runs but not
// list them still starts runs, uncounted.
func TestTriggerCreateOnly(t *testing.T) {
	cfg := triggerConfig()
	cfg.UID, cfg.MaxLiveRuns, cfg.Rate, cfg.Burst = "trigger-uid", 1, 1000, 1000
	gr := batchv1beta1.GroupVersion.WithResource("workflowruns").GroupResource()
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return apierrors.NewForbidden(gr, "", errors.New("list is not granted"))
		},
	}).Build()
	receive := receiver(t, cfg, c)
	for i := range 2 {
		if code := receive(); code != http.StatusOK {
			t.Fatalf("event %d with list forbidden: %d, want 200", i, code)
		}
	}
}

func TestTriggerDefaultMaxLiveRuns(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).Build()
	cfg := triggerConfig()
	cfg.Rate, cfg.Burst = 1000, 1000
	receive := receiver(t, cfg, c)
	for range triggersv1beta1.DefaultMaxLiveRuns {
		if code := receive(); code != http.StatusOK {
			t.Fatalf("reply %d before the default cap", code)
		}
	}
	if code := receive(); code != http.StatusTooManyRequests {
		t.Errorf("reply %d past %d runs not finished, want 429", code, triggersv1beta1.DefaultMaxLiveRuns)
	}
}

func TestTriggerRunOwned(t *testing.T) {
	cfg := triggerConfig()
	cfg.UID = "trigger-uid"
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).Build()
	receive := receiver(t, cfg, c)
	if code := receive(); code != http.StatusOK {
		t.Fatalf("reply %d", code)
	}
	got := runs(t, c)
	if len(got) != 1 {
		t.Fatalf("%d runs", len(got))
	}
	ref := metav1.GetControllerOf(&got[0])
	if ref == nil || ref.Kind != "WorkflowTrigger" || ref.Name != cfg.Name || ref.UID != cfg.UID || ref.APIVersion != triggersv1beta1.GroupVersion.String() {
		t.Errorf("controller %+v, want the WorkflowTrigger", ref)
	}
	if got[0].Labels[serverconfig.WorkflowTriggerUIDLabelKey] != "trigger-uid" {
		t.Errorf("labels %v, want %s", got[0].Labels, serverconfig.WorkflowTriggerUIDLabelKey)
	}
}
