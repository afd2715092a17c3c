package jobs

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// RetryableExitCode reports whether the ExitCode policy recreates a pod whose
// main container exited with code: 130 (SIGINT), 137 (SIGKILL), 143
// (SIGTERM) and 138 (SIGUSR1, for programs asking to be restarted). Every
// other non-zero code is a permanent failure.
func RetryableExitCode(code int32) bool {
	switch code {
	case 130, 137, 143, 138:
		return true
	}
	return false
}

// Reasons a kubelet or the node lifecycle gives a pod it stopped for the
// node's sake rather than the program's.
var disruptionReasons = map[string]bool{
	"Evicted":    true, // kubelet eviction under node pressure
	"Preempting": true,
	"NodeLost":   true,
	"Shutdown":   true, // graceful node shutdown
	"Terminated": true, // graceful node shutdown, older kubelets
}

// Termination is how a replica's pod ended.
type Termination struct {
	// Succeeded is true when the pod succeeded.
	Succeeded bool
	// Disrupted is true when the pod was stopped for its node's sake:
	// evicted, preempted, lost with its node, or deleted by someone else.
	Disrupted bool
	// ExitCode is the exit code that failed the pod, when HasExitCode.
	ExitCode    int32
	HasExitCode bool
	// Detail says how it ended, for messages.
	Detail string
}

// Terminated reports how pod ended, and false while it has not. main names
// the main container, whose exit code counts first.
func Terminated(pod *corev1.Pod, main string) (Termination, bool) {
	if disrupted(pod) && pod.Status.Phase != corev1.PodSucceeded {
		detail := "was disrupted"
		if pod.Status.Reason != "" {
			detail = "was stopped by its node (" + pod.Status.Reason + ")"
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
				detail = "was disrupted (" + c.Reason + ")"
			}
		}
		return Termination{Disrupted: true, Detail: detail}, true
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return Termination{Succeeded: true, Detail: "succeeded"}, true
	case corev1.PodFailed:
		t := Termination{Detail: "failed"}
		if code, ok := failedExitCode(pod, main); ok {
			t.ExitCode, t.HasExitCode = code, true
			t.Detail = fmt.Sprintf("exited with code %d", code)
		} else if pod.Status.Reason != "" {
			t.Detail = "failed (" + pod.Status.Reason + ")"
		}
		return t, true
	}
	return Termination{}, false
}

// disrupted reports whether pod was stopped for its node's sake.
func disrupted(pod *corev1.Pod) bool {
	if disruptionReasons[pod.Status.Reason] {
		return true
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// failedExitCode returns the non-zero exit code that failed pod: the main
// container's if it has one, else the first other container's, else the
// first init container's.
func failedExitCode(pod *corev1.Pod, main string) (int32, bool) {
	code := func(s corev1.ContainerStatus) (int32, bool) {
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 {
			return t.ExitCode, true
		}
		if t := s.LastTerminationState.Terminated; s.State.Terminated == nil && t != nil && t.ExitCode != 0 {
			return t.ExitCode, true
		}
		return 0, false
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == main {
			if c, ok := code(s); ok {
				return c, true
			}
		}
	}
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for _, s := range list {
			if c, ok := code(s); ok {
				return c, true
			}
		}
	}
	return 0, false
}

// WantsRestart reports whether policy recreates a pod that ended as t. A
// disrupted pod is always recreated.
func WantsRestart(policy batchv1beta1.ReplicaRestartPolicy, t Termination) bool {
	if t.Disrupted {
		return true
	}
	switch policy {
	case batchv1beta1.ReplicaRestartAlways:
		return true
	case batchv1beta1.ReplicaRestartOnFailure:
		return !t.Succeeded
	case batchv1beta1.ReplicaRestartExitCode:
		return !t.Succeeded && t.HasExitCode && RetryableExitCode(t.ExitCode)
	}
	return false
}

// RestartOf returns the restart rule of a replica type written as a
// restartPolicy object {policy, limit}: policy OnFailure and limit 0 unless
// set.
func RestartOf(p *batchv1beta1.RestartPolicy) Restart {
	policy, limit := batchv1beta1.RestartPolicyOnFailure, int32(0)
	if p != nil {
		if p.Policy != "" {
			policy = p.Policy
		}
		limit = p.Limit
	}
	return Restart{Policy: batchv1beta1.ReplicaRestartPolicy(policy), Limit: &limit}
}
