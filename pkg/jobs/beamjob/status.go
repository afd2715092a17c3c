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

// anyRunning reports whether one of the pods runs.
func anyRunning(ps []batchv1beta1.PodStatus) bool {
	for _, p := range ps {
		if p.Phase == corev1.PodRunning {
			return true
		}
	}
	return false
}

// setCondition sets condition typ of s, keeping its transition time while
// its status stays.
func setCondition(s *batchv1beta1.BeamJobStatus, typ batchv1beta1.JobConditionType, status bool, reason, message string, now metav1.Time) {
	st := corev1.ConditionFalse
	if status {
		st = corev1.ConditionTrue
	}
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if c.Type != typ {
			continue
		}
		if c.Status != st {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message = st, reason, message
		return
	}
	s.Conditions = append(s.Conditions, batchv1beta1.JobCondition{Type: typ, Status: st, Reason: reason, Message: message, LastTransitionTime: now})
}

// finished reports whether the phase is final.
func finished(p batchv1beta1.BeamJobPhase) bool {
	return p == batchv1beta1.BeamJobSucceeded || p == batchv1beta1.BeamJobFailed
}
