package eventlistener

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// EventRunDeleted is the event reason of a run deleted beyond a trigger's
// history limit.
const EventRunDeleted = "RunDeleted"

// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=workflowruns,verbs=get;list;watch;delete

// pruneRuns deletes the trigger's finished runs beyond its
// runsHistoryLimit, those that finished first first. The runs are found by
// the trigger's UID label; runs still going are never deleted (the trigger
// server bounds those by maxLiveRuns).
func (r *TriggerReconciler) pruneRuns(ctx context.Context, wt *triggersv1beta1.WorkflowTrigger) error {
	var list batchv1beta1.WorkflowRunList
	if err := r.client.List(ctx, &list, client.InNamespace(wt.Namespace),
		client.MatchingLabels{serverconfig.WorkflowTriggerUIDLabelKey: string(wt.UID)}); err != nil {
		return fmt.Errorf("listing the trigger's WorkflowRuns: %w", err)
	}
	var done []*batchv1beta1.WorkflowRun
	for i := range list.Items {
		run := &list.Items[i]
		if run.Status.Phase.Done() && run.DeletionTimestamp.IsZero() {
			done = append(done, run)
		}
	}
	limit := int(ptr.Deref(wt.Spec.RunsHistoryLimit, triggersv1beta1.DefaultRunsHistoryLimit))
	if len(done) <= limit {
		return nil
	}
	finished := func(run *batchv1beta1.WorkflowRun) metav1.Time {
		if run.Status.CompletionTime != nil {
			return *run.Status.CompletionTime
		}
		return run.CreationTimestamp
	}
	sort.SliceStable(done, func(i, j int) bool {
		a, b := finished(done[i]), finished(done[j])
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return done[i].Name < done[j].Name
	})
	log := ctrl.LoggerFrom(ctx)
	for _, run := range done[:len(done)-limit] {
		if err := r.client.Delete(ctx, run, client.Preconditions{UID: &run.UID},
			client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting WorkflowRun %s: %w", run.Name, err)
		}
		log.V(3).Info("Deleted a run beyond the history limit", "workflowRun", klog.KObj(run), "limit", limit)
		r.recorder.Eventf(wt, run, corev1.EventTypeNormal, EventRunDeleted, "Delete",
			"Deleted finished WorkflowRun %s: more than %d finished runs (runsHistoryLimit)", run.Name, limit)
	}
	return nil
}
