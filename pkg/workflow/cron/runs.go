package cron

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// ownedRuns lists the runs of the CronWorkflowRun through reader: those
// labelled with its name and controlled by it, ordered by scheduled time.
func ownedRuns(ctx context.Context, reader client.Reader, cwr *batchv1beta1.CronWorkflowRun) ([]*batchv1beta1.WorkflowRun, error) {
	var list batchv1beta1.WorkflowRunList
	if err := reader.List(ctx, &list, client.InNamespace(cwr.Namespace),
		client.MatchingLabels{batchv1beta1.CronWorkflowRunLabel: cwr.Name}); err != nil {
		return nil, fmt.Errorf("listing the WorkflowRuns of %s: %w", cwr.Name, err)
	}
	var runs []*batchv1beta1.WorkflowRun
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], cwr) {
			runs = append(runs, &list.Items[i])
		}
	}
	sortBySchedule(cwr.Name, runs)
	return runs, nil
}

// scheduledTime is the time a run was started for, from its name
// (RunName), or else its creation time.
func scheduledTime(cronName string, run *batchv1beta1.WorkflowRun) time.Time {
	if s, ok := strings.CutPrefix(run.Name, cronName+"-"); ok {
		if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(sec, 0)
		}
	}
	return run.CreationTimestamp.Time
}

// sortBySchedule orders runs by scheduled time, oldest first.
func sortBySchedule(cronName string, runs []*batchv1beta1.WorkflowRun) {
	sort.SliceStable(runs, func(i, j int) bool {
		ti, tj := scheduledTime(cronName, runs[i]), scheduledTime(cronName, runs[j])
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return runs[i].Name < runs[j].Name
	})
}

// newRun is the run of the CronWorkflowRun for the scheduled time t: the
// template's labels and annotations, the CronWorkflowRun's label, the
// CronWorkflowRun as its controller, and the template's spec.
func newRun(cwr *batchv1beta1.CronWorkflowRun, t time.Time, scheme *runtime.Scheme) (*batchv1beta1.WorkflowRun, error) {
	tmpl := &cwr.Spec.WorkflowRun
	labels := maps.Clone(tmpl.Metadata.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[batchv1beta1.CronWorkflowRunLabel] = cwr.Name
	run := &batchv1beta1.WorkflowRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   cwr.Namespace,
			Name:        RunName(cwr.Name, t),
			Labels:      labels,
			Annotations: queue.CarryGrant(maps.Clone(tmpl.Metadata.Annotations), cwr, tmpl.Spec.Scheduler.QueueName()),
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	if err := controllerutil.SetControllerReference(cwr, run, scheme); err != nil {
		return nil, fmt.Errorf("setting the owner of %s: %w", run.Name, err)
	}
	return run, nil
}

// deleteRun deletes the run and what it created (in the background), if it
// is still the run seen, and reports whether this call deleted it: a
// reconcile of a cache that has not seen an earlier deletion yet finds it
// gone.
func (r *Reconciler) deleteRun(ctx context.Context, run *batchv1beta1.WorkflowRun) (bool, error) {
	err := r.client.Delete(ctx, run, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &run.UID})
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return false, nil // gone already, or a new object of that name
	case err != nil:
		return false, fmt.Errorf("deleting WorkflowRun %s: %w", run.Name, err)
	}
	return true, nil
}

// pruneHistory deletes the oldest finished runs beyond the history limits.
// An unset limit (an object stored before the CRD defaulted it) is the
// default, CronJob's 3 succeeded and 1 failed.
func (r *Reconciler) pruneHistory(ctx context.Context, cwr *batchv1beta1.CronWorkflowRun, runs []*batchv1beta1.WorkflowRun) error {
	var ok, bad []*batchv1beta1.WorkflowRun
	for _, run := range runs {
		switch {
		case !run.DeletionTimestamp.IsZero():
		case succeeded(run):
			ok = append(ok, run)
		case failed(run):
			bad = append(bad, run)
		}
	}
	for _, kind := range []struct {
		runs  []*batchv1beta1.WorkflowRun
		limit int32
		what  string
		field string
	}{
		{ok, ptr.Deref(cwr.Spec.SuccessfulRunsHistoryLimit, batchv1beta1.DefaultSuccessfulRunsHistoryLimit), "succeeded", "successfulRunsHistoryLimit"},
		{bad, ptr.Deref(cwr.Spec.FailedRunsHistoryLimit, batchv1beta1.DefaultFailedRunsHistoryLimit), "failed", "failedRunsHistoryLimit"},
	} {
		if len(kind.runs) <= int(kind.limit) {
			continue
		}
		// runs are ordered by scheduled time: the oldest come first.
		for _, run := range kind.runs[:len(kind.runs)-int(kind.limit)] {
			deleted, err := r.deleteRun(ctx, run)
			if err != nil {
				return err
			}
			if !deleted {
				continue
			}
			ctrl.LoggerFrom(ctx).V(3).Info("Deleted a run beyond the history limit", "workflowRun", klog.KObj(run),
				"phase", run.Status.Phase, "limit", kind.limit)
			r.recorder.Eventf(cwr, run, corev1.EventTypeNormal, ReasonRunDeleted, "Delete",
				"Deleted %s WorkflowRun %s: more than %d %s runs (%s)", kind.what, run.Name, kind.limit, kind.what, kind.field)
		}
	}
	return nil
}
