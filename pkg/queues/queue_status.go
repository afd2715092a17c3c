package queues

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// Condition types and reasons of Queues.
const (
	// QueueOpen is True while the queue accepts new workloads (spec.closed
	// unset).
	QueueOpen = "Open"
	// QueueReady is True while the queue can admit workloads at all: open,
	// with a namespaceSelector that some namespace may match, and a valid
	// spec. It says nothing of the room left in the quota.
	QueueReady = "Ready"

	// ReasonOpen is the reason of Open=True.
	ReasonOpen = "Open"
	// ReasonClosed is the reason of Open=False and of Ready=False for a
	// closed queue.
	ReasonClosed = "Closed"
	// ReasonReady is the reason of Ready=True.
	ReasonReady = "Ready"
	// ReasonNoNamespaces is the reason of Ready=False for a queue without a
	// namespaceSelector, which no namespace may use.
	ReasonNoNamespaces = "NoNamespaceSelector"
	// ReasonInvalidSpec is the reason of Ready=False for a selector or
	// maxDuration that cannot be read.
	ReasonInvalidSpec = "InvalidSpec"
)

// queueStatus returns the status of q given its pods and its number of
// PodGroups; now stamps the conditions whose status changed.
func queueStatus(q *schedv1beta1.Queue, pods []*corev1.Pod, groups int, now metav1.Time) schedv1beta1.QueueStatus {
	st := schedv1beta1.QueueStatus{
		Allocated:  allocated(pods),
		PodGroups:  schedv1beta1.PodGroupCounts{Total: int32(groups)},
		Pods:       countPhases(pods),
		Conditions: append([]metav1.Condition(nil), q.Status.Conditions...),
	}
	set := func(typ string, ok bool, reason, msg string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: typ, Status: status, Reason: reason, Message: msg,
			ObservedGeneration: q.Generation, LastTransitionTime: now,
		})
	}
	if q.Spec.Closed {
		set(QueueOpen, false, ReasonClosed, "The queue is closed: it accepts no new workloads and allocates no resources")
	} else {
		set(QueueOpen, true, ReasonOpen, "The queue accepts new workloads")
	}
	reason, msg := readiness(q)
	set(QueueReady, reason == ReasonReady, reason, msg)
	return st
}

// readiness returns the reason and message of q's Ready condition.
func readiness(q *schedv1beta1.Queue) (reason, msg string) {
	if q.Spec.Closed {
		return ReasonClosed, "The queue is closed"
	}
	if q.Spec.NamespaceSelector == nil {
		return ReasonNoNamespaces, "The queue has no namespaceSelector: no namespace may use it"
	}
	if _, err := metav1.LabelSelectorAsSelector(q.Spec.NamespaceSelector); err != nil {
		return ReasonInvalidSpec, fmt.Sprintf("spec.namespaceSelector: %v", err)
	}
	if q.Spec.NodeSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(q.Spec.NodeSelector); err != nil {
			return ReasonInvalidSpec, fmt.Sprintf("spec.nodeSelector: %v", err)
		}
	}
	if q.Spec.MaxDuration != nil {
		if _, err := queue.ParseMaxDuration(*q.Spec.MaxDuration); err != nil {
			return ReasonInvalidSpec, fmt.Sprintf("spec.maxDuration: %v", err)
		}
	}
	return ReasonReady, "The queue admits workloads"
}
