package beamjob

import (
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// podStatuses returns the phase and reference of each pod, oldest first.
func podStatuses(pods []corev1.Pod) []batchv1beta1.PodStatus {
	sort.Slice(pods, func(i, j int) bool {
		if !pods[i].CreationTimestamp.Equal(&pods[j].CreationTimestamp) {
			return pods[i].CreationTimestamp.Before(&pods[j].CreationTimestamp)
		}
		return pods[i].Name < pods[j].Name
	})
	var out []batchv1beta1.PodStatus
	for _, p := range pods {
		phase := p.Status.Phase
		if phase == "" {
			phase = corev1.PodPending
		}
		out = append(out, batchv1beta1.PodStatus{Phase: phase, Reference: batchv1beta1.PodReference{Name: p.Name, UID: string(p.UID)}})
	}
	return out
}

// jobOutcome returns Succeeded or Failed once the submitter Job has
// finished, else "".
func jobOutcome(job *batchv1.Job) batchv1beta1.BeamJobPhase {
	if job == nil {
		return ""
	}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return batchv1beta1.BeamJobSucceeded
		case batchv1.JobFailed:
			return batchv1beta1.BeamJobFailed
		}
	}
	return ""
}

// nextPhase returns the phase of an unfinished BeamJob given its submitter
// Job: Initializing until the Job exists (it is made once the cluster
// runs), Running while it runs, then the Job's outcome.
func nextPhase(job *batchv1.Job) batchv1beta1.BeamJobPhase {
	if out := jobOutcome(job); out != "" {
		return out
	}
	if job == nil {
		return batchv1beta1.BeamJobInitializing
	}
	return batchv1beta1.BeamJobRunning
}

// clusterCondition returns the ClusterRunning condition for a cluster in
// state (exists false: there is no cluster).
func clusterCondition(exists bool, state string) batchv1beta1.JobCondition {
	c := batchv1beta1.JobCondition{Type: batchv1beta1.BeamClusterRunning, Status: corev1.ConditionFalse}
	switch {
	case !exists:
		c.Reason, c.Message = "ClusterNotFound", "The Flink cluster does not exist."
	case state == "":
		c.Reason, c.Message = "ClusterCreating", "The Flink cluster has no state yet."
	case state == ClusterStateRunning:
		c.Status, c.Reason, c.Message = corev1.ConditionTrue, "ClusterRunning", "The Flink cluster is running."
	default:
		c.Reason, c.Message = "Cluster"+state, "The Flink cluster is "+state+"."
	}
	return c
}

// jobCondition returns the JobRunning condition for the submitter Job and
// its pods.
func jobCondition(job *batchv1.Job, pods []corev1.Pod) batchv1beta1.JobCondition {
	c := batchv1beta1.JobCondition{Type: batchv1beta1.BeamJobRunningCond, Status: corev1.ConditionFalse}
	if job == nil {
		c.Reason, c.Message = "JobNotCreated", "The submitter Job is created once the Flink cluster runs."
		return c
	}
	switch jobOutcome(job) {
	case batchv1beta1.BeamJobSucceeded:
		c.Reason, c.Message = "JobSucceeded", "The submitter Job "+job.Name+" has succeeded."
		return c
	case batchv1beta1.BeamJobFailed:
		c.Reason, c.Message = "JobFailed", "The submitter Job "+job.Name+" has failed."
		return c
	}
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			c.Status, c.Reason, c.Message = corev1.ConditionTrue, "PodRunning", "The submitter pod "+p.Name+" is running."
			return c
		}
	}
	c.Reason, c.Message = "PodNotRunning", "No pod of the submitter Job "+job.Name+" is running."
	return c
}

// setCondition sets the condition of want's type in s, keeping its
// transition time while its status stays.
func setCondition(s *batchv1beta1.BeamJobStatus, want batchv1beta1.JobCondition, now metav1.Time) {
	want.LastTransitionTime = now
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if c.Type != want.Type {
			continue
		}
		if c.Status == want.Status {
			want.LastTransitionTime = c.LastTransitionTime
		}
		*c = want
		return
	}
	s.Conditions = append(s.Conditions, want)
}

// condition returns condition typ of s, or nil.
func condition(s *batchv1beta1.BeamJobStatus, typ batchv1beta1.JobConditionType) *batchv1beta1.JobCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == typ {
			return &s.Conditions[i]
		}
	}
	return nil
}

// finished reports whether the phase is final.
func finished(p batchv1beta1.BeamJobPhase) bool {
	return p == batchv1beta1.BeamJobSucceeded || p == batchv1beta1.BeamJobFailed
}
