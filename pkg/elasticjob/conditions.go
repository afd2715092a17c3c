package elasticjob

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "k8s.io/api/core/v1"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

// Condition reasons, DLRover's.
const (
	// ReasonJobCreated is the reason of the Created condition.
	ReasonJobCreated = "JobCreated"
	// ReasonJobPending is the reason of the Pending condition.
	ReasonJobPending = "JobPending"
	// ReasonJobRunning is the reason of the Running condition.
	ReasonJobRunning = "JobRunning"
	// ReasonJobScaling is the reason of the Scaling condition.
	ReasonJobScaling = "JobScaling"
	// ReasonJobSucceeded is the reason of the Succeeded condition.
	ReasonJobSucceeded = "JobSucceeded"
	// ReasonJobFailed is the reason of the Failed condition when the failed
	// pod gives none.
	ReasonJobFailed = "JobFailed"
)

// progress are the conditions of a job under way; one at a time is True.
var progress = []elasticv1alpha1.JobConditionType{
	elasticv1alpha1.JobPending, elasticv1alpha1.JobRunning, elasticv1alpha1.JobScaling, elasticv1alpha1.JobRestarting,
}

// finished reports whether the job has succeeded or failed.
func finished(job *elasticv1alpha1.ElasticJob) bool {
	return job.Status.Phase == elasticv1alpha1.JobSucceeded || job.Status.Phase == elasticv1alpha1.JobFailed
}

// setCondition makes typ the job's phase and its condition True, and the
// other progress conditions False. A finished job keeps its conditions.
func setCondition(job *elasticv1alpha1.ElasticJob, typ elasticv1alpha1.JobConditionType, reason, message string) {
	if finished(job) {
		return
	}
	now := metav1.Now()
	for _, p := range progress {
		if p != typ {
			setStatus(job, p, corev1.ConditionFalse, "", "", now)
		}
	}
	setStatus(job, typ, corev1.ConditionTrue, reason, message, now)
	job.Status.Phase = typ
}

// finish ends the job with typ (Succeeded or Failed) and sets its
// completion time.
func finish(job *elasticv1alpha1.ElasticJob, typ elasticv1alpha1.JobConditionType, reason, message string) {
	if finished(job) {
		return
	}
	setCondition(job, typ, reason, message)
	setStatus(job, elasticv1alpha1.JobRunning, corev1.ConditionFalse, "", "", metav1.Now())
	if job.Status.CompletionTime == nil {
		now := metav1.Now()
		job.Status.CompletionTime = &now
	}
}

// setStatus writes condition typ of the job. A condition that does not
// exist is added only when True; an unchanged one is left alone, and the
// reason and message of one turned False are kept.
func setStatus(job *elasticv1alpha1.ElasticJob, typ elasticv1alpha1.JobConditionType, status corev1.ConditionStatus, reason, message string, now metav1.Time) {
	conds := job.Status.Conditions
	for i := range conds {
		c := &conds[i]
		if c.Type != typ {
			continue
		}
		if status == corev1.ConditionFalse {
			reason, message = c.Reason, c.Message
		}
		if c.Status == status && c.Reason == reason && c.Message == message {
			return
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message, c.LastUpdateTime = status, reason, message, now
		return
	}
	if status != corev1.ConditionTrue {
		return
	}
	job.Status.Conditions = append(conds, elasticv1alpha1.JobCondition{
		Type: typ, Status: status, Reason: reason, Message: message, LastUpdateTime: now, LastTransitionTime: now,
	})
}

// condition returns condition typ of the job, or nil.
func condition(job *elasticv1alpha1.ElasticJob, typ elasticv1alpha1.JobConditionType) *elasticv1alpha1.JobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == typ {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// setReplicaStatus counts pods, of type t, by phase into the job's status;
// the initial count is kept.
func setReplicaStatus(job *elasticv1alpha1.ElasticJob, t elasticv1alpha1.ReplicaType, pods []corev1.Pod) {
	if job.Status.ReplicaStatuses == nil {
		job.Status.ReplicaStatuses = map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaStatus{}
	}
	s := &elasticv1alpha1.ReplicaStatus{
		LabelSelector: &metav1.LabelSelector{MatchLabels: jobLabels(job.Name, t)},
	}
	if old := job.Status.ReplicaStatuses[t]; old != nil {
		s.Initial = old.Initial
	}
	for i := range pods {
		switch pods[i].Status.Phase {
		case corev1.PodPending:
			s.Pending++
		case corev1.PodRunning:
			s.Active++
		case corev1.PodSucceeded:
			s.Succeeded++
		case corev1.PodFailed:
			s.Failed++
		}
	}
	job.Status.ReplicaStatuses[t] = s
}
