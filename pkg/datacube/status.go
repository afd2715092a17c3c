package datacube

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// Reasons of the DataCube conditions.
const (
	ReasonInvalidSpec = "InvalidSpec"
	ReasonJobConflict = "JobConflict"
	ReasonPodCreated  = "PodCreated"
	ReasonSucceeded   = "Succeeded"
	ReasonFailed      = "Failed"
)

// observe derives the status from the Job and its latest pod.
func observe(st *tensorstackv1beta1.DataCubeStatus, job *batchv1.Job, pod *corev1.Pod) {
	if pod != nil {
		st.Pod = &tensorstackv1beta1.PodStatus{
			Reference: tensorstackv1beta1.PodReference{Name: pod.Name, UID: pod.UID},
			Phase:     pod.Status.Phase,
			Status:    containerStatus(pod),
		}
		setCondition(st, tensorstackv1beta1.DataCubeInitialized, corev1.ConditionTrue, ReasonPodCreated, MessageInitialized)
		if p := progressFrom(pod); p != nil {
			st.Progress = p
		}
	}
	st.Phase = tensorstackv1beta1.DataCubePending
	if pod != nil && pod.Status.Phase == corev1.PodRunning {
		st.Phase = tensorstackv1beta1.DataCubeRunning
	}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			st.Phase = tensorstackv1beta1.DataCubeSucceeded
			setCondition(st, tensorstackv1beta1.DataCubeComplete, corev1.ConditionTrue, ReasonSucceeded, MessageComplete)
			setCondition(st, tensorstackv1beta1.DataCubeFailed, corev1.ConditionFalse, "", "")
			return
		case batchv1.JobFailed:
			st.Phase = tensorstackv1beta1.DataCubeFailedPhase
			msg := "The DataCube is failed"
			if c.Message != "" {
				msg += ": " + c.Message
			}
			setCondition(st, tensorstackv1beta1.DataCubeFailed, corev1.ConditionTrue, ReasonFailed, msg)
			setCondition(st, tensorstackv1beta1.DataCubeComplete, corev1.ConditionFalse, "", "")
			return
		}
	}
}

// containerStatus is the executor container's state in kubectl's words.
func containerStatus(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		switch {
		case cs.State.Terminated != nil:
			return cs.State.Terminated.Reason
		case cs.State.Waiting != nil:
			return cs.State.Waiting.Reason
		case cs.State.Running != nil:
			return "Running"
		}
	}
	return string(pod.Status.Phase)
}

// setCondition sets a condition, moving lastTransitionTime only when the
// status changes and lastProbeTime on every change.
func setCondition(st *tensorstackv1beta1.DataCubeStatus, t tensorstackv1beta1.DataCubeConditionType, status corev1.ConditionStatus, reason, message string) {
	now := metav1.Now()
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status == status && c.Reason == reason && c.Message == message {
			return
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message, c.LastProbeTime = status, reason, message, now
		return
	}
	st.Conditions = append(st.Conditions, tensorstackv1beta1.DataCubeCondition{
		Type: t, Status: status, Reason: reason, Message: message, LastProbeTime: now, LastTransitionTime: now,
	})
}
