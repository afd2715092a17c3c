package notebook

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// ConditionSSHReady is the condition, of a Notebook with SSH enabled, that
// is True when every Secret spec.ssh.authorized_keys names holds public
// keys, and False naming those that do not (which are left out of the
// pod).
const ConditionSSHReady = "SSHReady"

// Reasons of the Ready condition.
const (
	// ReasonPodReady: the pod is running and ready (True).
	ReasonPodReady = "PodReady"
	// ReasonSuspended: spec.suspend is true (False).
	ReasonSuspended = "Suspended"
	// ReasonWaiting: no pod yet, or a pod not ready yet (False).
	ReasonWaiting = "Waiting"
	// ReasonPodFailed: the pod failed, or a container cannot start
	// without a change such as a pullable image (False).
	ReasonPodFailed = "PodFailed"
	// ReasonPodUnknown: the pod's node does not report (Unknown).
	ReasonPodUnknown = "PodUnknown"
	// ReasonInvalidSpec: the spec cannot run (False); the webhook refuses
	// such specs when it is up.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonReconcileFailed: the controller could not write the
	// StatefulSet or a Service (False).
	ReasonReconcileFailed = "ReconcileFailed"
)

// Reasons of the SSHReady condition.
const (
	// ReasonKeysMounted: every Secret named holds public keys (True).
	ReasonKeysMounted = "KeysMounted"
	// ReasonSecretNotFound: a Secret named does not exist (False).
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonSecretInvalid: a Secret named is not of the SSH type or holds
	// no public key (False).
	ReasonSecretInvalid = "SecretInvalid"
)

// condition is the state of a condition to write.
type condition struct {
	status          corev1.ConditionStatus
	reason, message string
}

// of returns c as the condition typ, for interactive.SetCondition.
func (c condition) of(typ string) tensorstackv1beta1.WorkloadCondition {
	return tensorstackv1beta1.WorkloadCondition{Type: typ, Status: c.status, Reason: c.reason, Message: c.message}
}

// observed is the state of a Notebook read from its pod.
type observed struct {
	phase tensorstackv1beta1.NotebookPhase
	pod   *tensorstackv1beta1.PodStatus
	ready condition
}

// observe returns the state of the Notebook with suspend from its pod (nil
// when there is none), whose container main runs the server.
func observe(suspend bool, main, podName string, pod *corev1.Pod) observed {
	var o observed
	if pod != nil {
		o.pod = &tensorstackv1beta1.PodStatus{
			Reference: tensorstackv1beta1.PodReference{Name: pod.Name, UID: pod.UID},
			Phase:     pod.Status.Phase,
			Status:    containerState(pod, main),
		}
	}
	switch {
	case suspend:
		o.phase, o.ready = tensorstackv1beta1.NotebookSuspended, condition{corev1.ConditionFalse, ReasonSuspended, "The Notebook is suspended"}
	case pod == nil:
		o.phase, o.ready = tensorstackv1beta1.NotebookPending, condition{corev1.ConditionFalse, ReasonWaiting, fmt.Sprintf("Waiting for pod %s", podName)}
	case pod.DeletionTimestamp != nil:
		o.phase, o.ready = tensorstackv1beta1.NotebookPending, condition{corev1.ConditionFalse, ReasonWaiting, fmt.Sprintf("Pod %s is terminating", pod.Name)}
	case pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded:
		o.phase, o.ready = tensorstackv1beta1.NotebookFailed, condition{corev1.ConditionFalse, ReasonPodFailed, podMessage(pod, "ended")}
	case pod.Status.Phase == corev1.PodUnknown:
		o.phase, o.ready = tensorstackv1beta1.NotebookUnknown, condition{corev1.ConditionUnknown, ReasonPodUnknown, podMessage(pod, "is in an unknown state")}
	case stuckContainer(pod) != "":
		o.phase, o.ready = tensorstackv1beta1.NotebookFailed, condition{corev1.ConditionFalse, ReasonPodFailed, stuckContainer(pod)}
	case pod.Status.Phase == corev1.PodRunning && interactive.PodReady(pod):
		o.phase, o.ready = tensorstackv1beta1.NotebookRunning, condition{corev1.ConditionTrue, ReasonPodReady, fmt.Sprintf("Pod %s is ready", pod.Name)}
	case pod.Status.Phase == corev1.PodRunning:
		o.phase, o.ready = tensorstackv1beta1.NotebookRunning, condition{corev1.ConditionFalse, ReasonWaiting, podMessage(pod, "is not ready")}
	default:
		o.phase, o.ready = tensorstackv1beta1.NotebookPending, condition{corev1.ConditionFalse, ReasonWaiting, podMessage(pod, "is pending")}
	}
	return o
}

// podMessage says that pod is in state, with the reason and message of
// its Ready condition or of the pod when it has them.
func podMessage(pod *corev1.Pod, state string) string {
	msg := fmt.Sprintf("Pod %s %s", pod.Name, state)
	reason, detail := pod.Status.Reason, pod.Status.Message
	for _, c := range pod.Status.Conditions {
		if (c.Type == corev1.PodReady || c.Type == corev1.PodScheduled) && c.Status != corev1.ConditionTrue && c.Message != "" && reason == "" {
			reason, detail = c.Reason, c.Message
		}
	}
	if reason != "" {
		msg += ": " + reason
	}
	if detail != "" {
		msg += ": " + detail
	}
	return msg
}

// stuckContainer describes a container of pod waiting for a reason that
// needs a change (interactive.StuckContainer), or returns "".
func stuckContainer(pod *corev1.Pod) string {
	name, w := interactive.StuckContainer(pod)
	if w == nil {
		return ""
	}
	msg := fmt.Sprintf("Container %s of pod %s: %s", name, pod.Name, w.Reason)
	if w.Message != "" {
		msg += ": " + w.Message
	}
	return msg
}

// containerState returns the state of the container name of pod: Running,
// the reason it waits or ended, or "" when it has no status yet.
func containerState(pod *corev1.Pod, name string) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != name {
			continue
		}
		switch s := cs.State; {
		case s.Running != nil:
			return "Running"
		case s.Waiting != nil:
			return s.Waiting.Reason
		case s.Terminated != nil:
			return s.Terminated.Reason
		}
	}
	return ""
}

// sshStatus returns the state of the SSH Service svc, keeping the last
// client activity the Resource Keeper wrote in old.
func sshStatus(svc *corev1.Service, old *tensorstackv1beta1.NotebookSSHStatus) *tensorstackv1beta1.NotebookSSHStatus {
	s := &tensorstackv1beta1.NotebookSSHStatus{ServiceName: svc.Name, ClusterIP: svc.Spec.ClusterIP}
	if len(svc.Spec.Ports) > 0 {
		p := svc.Spec.Ports[0]
		s.Port, s.NodePort, s.Protocol = p.Port, p.NodePort, p.Protocol
	}
	if old != nil && old.ServiceName == svc.Name {
		s.LastSSHClientActivity = old.LastSSHClientActivity
	}
	return s
}

// keysCondition returns the SSHReady condition of the Secrets ks.
func keysCondition(ks keySecrets) condition {
	if ks.reason != "" {
		return condition{corev1.ConditionFalse, ks.reason, ks.message()}
	}
	switch len(ks.valid) {
	case 0:
		return condition{corev1.ConditionTrue, ReasonKeysMounted, "No authorized keys are named: nobody can log in"}
	case 1:
		return condition{corev1.ConditionTrue, ReasonKeysMounted, fmt.Sprintf("The public keys of Secret %s are mounted", ks.valid[0])}
	}
	return condition{corev1.ConditionTrue, ReasonKeysMounted, fmt.Sprintf("The public keys of Secrets %s are mounted", strings.Join(ks.valid, ", "))}
}
