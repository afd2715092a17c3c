package eventlistener

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// triggerRun is a run of the trigger with uid in phase, finished at
// minute (when it is finished).
func triggerRun(name string, uid types.UID, phase batchv1beta1.NodePhase, minute int) *batchv1beta1.WorkflowRun {
	r := &batchv1beta1.WorkflowRun{ObjectMeta: metav1.ObjectMeta{
		Namespace: "demo", Name: name, Labels: map[string]string{serverconfig.WorkflowTriggerUIDLabelKey: string(uid)},
		CreationTimestamp: metav1.NewTime(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)),
	}}
	r.Status.Phase = phase
	if phase.Done() {
		r.Status.CompletionTime = ptr.To(metav1.NewTime(time.Date(2026, 3, 2, 10, minute, 0, 0, time.UTC)))
	}
	return r
}

func TestTriggerRunsHistory(t *testing.T) {
	wt := newTrigger("workflow-trigger-sample", "event-listener-sample")
	wt.Spec.RunsHistoryLimit = ptr.To[int32](2)
	f := newFixture(t, newListener("event-listener-sample"), wt,
		// Out of order, so that the names do not sort them.
		triggerRun("r3", wt.UID, batchv1beta1.NodeSucceeded, 3),
		triggerRun("r1", wt.UID, batchv1beta1.NodeFailed, 1),
		triggerRun("r4", wt.UID, batchv1beta1.NodeError, 4),
		triggerRun("r2", wt.UID, batchv1beta1.NodeSucceeded, 2),
		triggerRun("running", wt.UID, batchv1beta1.NodeRunning, 0),
		triggerRun("pending", wt.UID, "", 0),
		triggerRun("other", "other-uid", batchv1beta1.NodeSucceeded, 0),
	)
	f.reconcileTrigger(t, wt.Name)
	var list batchv1beta1.WorkflowRunList
	if err := f.c.List(context.Background(), &list, client.InNamespace("demo")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range list.Items {
		got = append(got, r.Name)
	}
	slices.Sort(got)
	if want := []string{"other", "pending", "r3", "r4", "running"}; !slices.Equal(got, want) {
		t.Errorf("runs %v, want %v: the two that finished last, those not finished, another trigger's", got, want)
	}
}

func TestTriggerRunsHistoryDefault(t *testing.T) {
	wt := newTrigger("workflow-trigger-sample", "event-listener-sample")
	objs := []client.Object{newListener("event-listener-sample"), wt}
	n := int(triggersv1beta1.DefaultRunsHistoryLimit) + 3
	for i := range n {
		objs = append(objs, triggerRun(fmt.Sprintf("r%02d", i), wt.UID, batchv1beta1.NodeSucceeded, i))
	}
	f := newFixture(t, objs...)
	f.reconcileTrigger(t, wt.Name)
	var list batchv1beta1.WorkflowRunList
	if err := f.c.List(context.Background(), &list, client.InNamespace("demo")); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != int(triggersv1beta1.DefaultRunsHistoryLimit) {
		t.Errorf("%d runs kept, want the default %d", len(list.Items), triggersv1beta1.DefaultRunsHistoryLimit)
	}
	for _, r := range list.Items {
		if r.Name < "r03" {
			t.Errorf("kept %s, one of the oldest", r.Name)
		}
	}
}
