package jobs

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

func TestRetryableExitCode(t *testing.T) {
	retry := map[int32]bool{130: true, 137: true, 143: true, 138: true}
	for code := int32(0); code < 256; code++ {
		if got := RetryableExitCode(code); got != retry[code] {
			t.Errorf("RetryableExitCode(%d) = %v", code, got)
		}
	}
}

func failedPod(codes map[string]int32, order ...string) *corev1.Pod {
	p := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed}}
	for _, name := range order {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: codes[name]}},
		})
	}
	return p
}

func TestTerminated(t *testing.T) {
	evicted := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}}
	preempted := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Conditions: []corev1.PodCondition{
		{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"}}}}
	initFailed := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, InitContainerStatuses: []corev1.ContainerStatus{
		{Name: "init", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}}}}}
	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		ended bool
		want  Termination
	}{
		{"running", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}, false, Termination{}},
		{"succeeded", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}, true, Termination{Succeeded: true, Detail: "succeeded"}},
		{"main container first", failedPod(map[string]int32{"sidecar": 1, "pytorch": 137}, "sidecar", "pytorch"), true,
			Termination{ExitCode: 137, HasExitCode: true, Detail: "exited with code 137"}},
		{"other container", failedPod(map[string]int32{"sidecar": 3}, "sidecar", "pytorch"), true,
			Termination{ExitCode: 3, HasExitCode: true, Detail: "exited with code 3"}},
		{"init container", initFailed, true, Termination{ExitCode: 2, HasExitCode: true, Detail: "exited with code 2"}},
		{"no exit code", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "DeadlineExceeded"}}, true, Termination{Detail: "failed (DeadlineExceeded)"}},
		{"evicted", evicted, true, Termination{Disrupted: true, Detail: "was stopped by its node (Evicted)"}},
		{"preempted", preempted, true, Termination{Disrupted: true, Detail: "was disrupted (PreemptionByScheduler)"}},
	} {
		got, ended := Terminated(tc.pod, "pytorch")
		if ended != tc.ended || got != tc.want {
			t.Errorf("%s: Terminated = %+v, %v; want %+v, %v", tc.name, got, ended, tc.want, tc.ended)
		}
	}
}

func TestWantsRestart(t *testing.T) {
	succeeded := Termination{Succeeded: true}
	code := func(c int32) Termination { return Termination{ExitCode: c, HasExitCode: true} }
	noCode := Termination{}
	disrupted := Termination{Disrupted: true}
	for _, tc := range []struct {
		policy batchv1beta1.ReplicaRestartPolicy
		t      Termination
		want   bool
	}{
		{batchv1beta1.ReplicaRestartNever, code(137), false},
		{batchv1beta1.ReplicaRestartNever, disrupted, true},
		{batchv1beta1.ReplicaRestartNever, succeeded, false},
		{batchv1beta1.ReplicaRestartOnFailure, code(1), true},
		{batchv1beta1.ReplicaRestartOnFailure, noCode, true},
		{batchv1beta1.ReplicaRestartOnFailure, succeeded, false},
		{batchv1beta1.ReplicaRestartAlways, succeeded, true},
		{batchv1beta1.ReplicaRestartAlways, code(1), true},
		{batchv1beta1.ReplicaRestartExitCode, code(130), true},
		{batchv1beta1.ReplicaRestartExitCode, code(137), true},
		{batchv1beta1.ReplicaRestartExitCode, code(143), true},
		{batchv1beta1.ReplicaRestartExitCode, code(138), true},
		{batchv1beta1.ReplicaRestartExitCode, code(1), false},
		{batchv1beta1.ReplicaRestartExitCode, code(139), false},
		{batchv1beta1.ReplicaRestartExitCode, noCode, false},
		{batchv1beta1.ReplicaRestartExitCode, disrupted, true},
		{batchv1beta1.ReplicaRestartExitCode, succeeded, false},
	} {
		if got := WantsRestart(tc.policy, tc.t); got != tc.want {
			t.Errorf("WantsRestart(%s, %s) = %v", tc.policy, fmt.Sprintf("%+v", tc.t), got)
		}
	}
}
