package jobs

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// finished records outcome o in the job's status, with an event.
func (r *Reconciler) finished(obj client.Object, job *Job, o Outcome, now metav1.Time) {
	finish(job.Status, o, now)
	if o.Succeeded {
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventSucceeded, "Finish", "%s", o.Message)
	} else {
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventFailed, "Finish", "%s", o.Message)
	}
}

// finishNow ends a job that was running with outcome o: it records the
// outcome, with its event, and does what a finished job's reconcile does
// (afterFinish).
func (r *Reconciler) finishNow(ctx context.Context, p *pass, o Outcome) error {
	r.finished(p.obj, p.job, o, p.now)
	return r.afterFinish(ctx, p)
}

// stoppedReasons are the failures the engine imposes rather than the job's
// own end: the job's unfinished pods are deleted whatever its clean-up
// policy, since nothing will tend them any more.
var stoppedReasons = map[string]bool{ReasonDeadline: true, ReasonInvalid: true, ReasonCreationFailed: true}

// afterFinish keeps the status of a finished job and deletes the pods its
// clean-up policy names. A job stopped by the engine (stoppedReasons) loses
// its unfinished pods whatever the policy.
func (r *Reconciler) afterFinish(ctx context.Context, p *pass) error {
	job := p.job
	b := newBudget(job)
	states := plan(job, p.obs, b, true)
	policy := cleanUpPolicy(job)
	var doomed []*corev1.Pod
	for _, pod := range p.pods {
		if cleanedUp(job, states, pod, policy) {
			doomed = append(doomed, pod)
		}
	}
	if err := r.fillStatus(ctx, p, states, b, podNames(doomed)); err != nil {
		return err
	}
	if err := r.writeStatus(ctx, p.original, job.Object); err != nil {
		return err
	}
	return r.deletePods(ctx, doomed)
}

// cleanUpPolicy returns the clean-up policy a finished job gets: its own,
// except that a job the engine stopped (stoppedReasons) loses its
// unfinished pods under any policy short of All.
func cleanUpPolicy(job *Job) batchv1beta1.CleanUpPolicy {
	policy := job.CleanUpPolicy
	if c := Condition(job.Status, batchv1beta1.JobFailedCond); c != nil && c.Status == corev1.ConditionTrue && stoppedReasons[c.Reason] && policy != batchv1beta1.CleanUpPolicyAll {
		policy = batchv1beta1.CleanUpPolicyUnfinished
	}
	return policy
}

// cleanedUp decides whether pod, of a finished job whose replicas are in
// states, is deleted under policy: a pod already being deleted is not; a
// deletion decided before the job finished stands; an ended pod of a type
// kept on clean-up stays; otherwise policy All deletes every pod and policy
// Unfinished those that have not ended.
func cleanedUp(job *Job, states *States, pod *corev1.Pod, policy batchv1beta1.CleanUpPolicy) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	if rs := states.byName[pod.Name]; rs != nil && rs.unfinished && rs.Pod == pod {
		return true // a deletion decided before the job finished
	}
	ended := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	if rep := job.Replica(pod.Labels[ReplicaTypeLabel]); rep != nil && rep.KeepOnCleanUp && ended {
		return false
	}
	switch policy {
	case batchv1beta1.CleanUpPolicyAll:
		return true
	case batchv1beta1.CleanUpPolicyUnfinished:
		return !ended
	}
	return false
}

// podNames returns the names of pods, as a set.
func podNames(pods []*corev1.Pod) map[string]bool {
	names := map[string]bool{}
	for _, p := range pods {
		names[p.Name] = true
	}
	return names
}

// deletePods deletes pods one by one (deletePod), stopping at the first
// error.
func (r *Reconciler) deletePods(ctx context.Context, pods []*corev1.Pod) error {
	for _, p := range pods {
		if err := r.deletePod(ctx, p); err != nil {
			return err
		}
	}
	return nil
}
