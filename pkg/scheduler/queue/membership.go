package queue

import (
	corev1 "k8s.io/api/core/v1"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
)

// Membership is where a pod belongs in the T9k Scheduler's terms.
type Membership struct {
	// Queue is the pod's queue, "" when the pod is in none.
	Queue string
	// Group is the pod's PodGroup, "" when it is in none.
	Group string
	// Role is the pod's PodGroup role, "" when it has none.
	Role string
}

// GroupLookup returns the PodGroup namespace/name, or nil when there is none.
type GroupLookup func(namespace, name string) *schedv1beta1.PodGroup

// MembershipOf resolves the queue of pod as §2.4 of the platform's contract
// says: a pod in a PodGroup uses the group's queue (default "default"); a pod
// in no group, or whose group does not exist yet, uses its queue label.
func MembershipOf(pod *corev1.Pod, groups GroupLookup) Membership {
	m := Membership{
		Queue: pod.Labels[schedv1beta1.QueueLabel],
		Group: pod.Labels[schedv1beta1.GroupNameLabel],
		Role:  pod.Labels[schedv1beta1.RoleLabel],
	}
	if m.Group == "" || groups == nil {
		return m
	}
	if pg := groups(pod.Namespace, m.Group); pg != nil {
		m.Queue = GroupQueue(pg)
	}
	return m
}

// GroupQueue is the queue of a PodGroup, "default" when it names none.
func GroupQueue(pg *schedv1beta1.PodGroup) string {
	if pg.Spec.Queue == "" {
		return schedv1beta1.DefaultQueue
	}
	return pg.Spec.Queue
}

// Holds reports whether pod holds resources of its queue: bound to a node
// and not finished.
func Holds(pod *corev1.Pod) bool {
	return pod.Spec.NodeName != "" && !Finished(pod) && pod.DeletionTimestamp == nil
}

// Finished reports whether pod has run to completion or failure.
func Finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
