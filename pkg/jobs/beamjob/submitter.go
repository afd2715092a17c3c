package beamjob

import (
	"errors"

	batchv1 "k8s.io/api/batch/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// newSubmitter returns the submitter Job of bj from spec.jobTemplate, named
// <job>-batchjob-<random>, with the job's labels on it and its pods, and
// the T9k Scheduler's name and queue label on its pods when
// spec.scheduler.t9kScheduler is set.
func newSubmitter(bj *batchv1beta1.BeamJob) (*batchv1.Job, error) {
	if bj.Spec.JobTemplate == nil {
		return nil, errors.New("spec.jobTemplate is required")
	}
	t := bj.Spec.JobTemplate.DeepCopy()
	job := &batchv1.Job{ObjectMeta: t.ObjectMeta, Spec: t.Spec}
	job.Name, job.GenerateName, job.Namespace = "", bj.Name+"-batchjob-", bj.Namespace
	own := jobs.Labels(Component, bj.Name)
	job.Labels = merge(job.Labels, own)
	podLabels := merge(job.Spec.Template.Labels, own)
	podLabels[jobs.ComponentTypeLabel] = jobs.ComponentTypeUser
	if sc := bj.Spec.Scheduler; sc != nil && sc.T9kScheduler != nil {
		job.Spec.Template.Spec.SchedulerName = jobs.SchedulerName
		podLabels[jobs.QueueLabel] = sc.T9kScheduler.Queue
	}
	job.Spec.Template.Labels = podLabels
	job.Spec.Template.Annotations = queue.CarryGrant(job.Spec.Template.Annotations, bj, podLabels[jobs.QueueLabel])
	return job, nil
}
