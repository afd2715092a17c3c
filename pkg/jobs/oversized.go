package jobs

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// pods returns the number of pods job wants, summed without overflowing.
func (j *Job) pods() int64 {
	counts := make([]int32, 0, len(j.Replicas))
	for _, r := range j.Replicas {
		counts = append(counts, r.Replicas)
	}
	return totalPods(counts)
}

// oversized reports whether job wants more than MaxJobPods pods. Such a job
// is never planned: working out the state of each of its replicas is what
// the bound keeps the controller from doing. Kinds refuse such jobs in
// ValidateShape; this holds for kinds that do not, and for jobs no webhook
// saw.
func oversized(job *Job) bool { return job.pods() > MaxJobPods }

// stopOversized fails an oversized job, unless it has finished, and deletes
// its pods that have not ended (all of them under clean-up policy All),
// without looking at its replicas one by one. Its status keeps no replica
// entries.
func (r *Reconciler) stopOversized(ctx context.Context, original client.Object, job *Job, pods []*corev1.Pod, now metav1.Time) error {
	n := job.pods()
	ctrl.LoggerFrom(ctx).Info("Job has too many replicas to run", "pods", n, "limit", MaxJobPods)
	if !Finished(job.Status) {
		r.finished(job.Object, job, Outcome{Done: true, Reason: ReasonInvalid,
			Message: fmt.Sprintf("The job is invalid: %s.", tooManyPods(n))}, now)
	}
	job.Status.Tasks = nil
	job.Status.Aggregate = batchv1beta1.Aggregate{}
	if err := r.writeStatus(ctx, original, job.Object); err != nil {
		return err
	}
	for _, p := range pods {
		ended := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		if p.DeletionTimestamp != nil || (ended && job.CleanUpPolicy != batchv1beta1.CleanUpPolicyAll) {
			continue
		}
		if err := r.deletePod(ctx, p); err != nil {
			return err
		}
	}
	return nil
}
