package jobs

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// pause deletes the job's pods; the job is Paused once none is left.
func (r *Reconciler) pause(ctx context.Context, p *pass) error {
	job := p.job
	var doomed []*corev1.Pod
	for _, pod := range p.pods {
		if pod.DeletionTimestamp == nil && !r.deleted.has(pod.UID) {
			doomed = append(doomed, pod)
		}
	}
	b := newBudget(job)
	states := plan(job, p.obs, b, true)
	job.Status.Tasks = buildTasks(job, states, b, podNames(p.pods), p.obs)
	job.Status.Aggregate = aggregate(job.Status.Tasks)
	if !isTrue(job.Status, batchv1beta1.JobPausedCond) {
		// Every pod is deleted or being deleted once this reconcile is done.
		setCondition(job.Status, batchv1beta1.JobPausedCond, corev1.ConditionTrue, reasonPaused, msgPaused, p.now)
		setCondition(job.Status, batchv1beta1.JobRunningCond, corev1.ConditionFalse, reasonPaused, msgPaused, p.now)
		job.Status.Phase = batchv1beta1.JobPaused
		r.recorder.Eventf(job.Object, nil, corev1.EventTypeNormal, EventPaused, "Pause", "Pausing the job: deleting %d pods", len(doomed))
	}
	if err := r.writeStatus(ctx, p.original, job.Object); err != nil {
		return err
	}
	return r.deletePods(ctx, doomed)
}
