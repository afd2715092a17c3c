package seqpod

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/workflow/seqpod/sequencer"
)

// state is how a container of a test pod stands: "running", "waiting",
// or terminated with an exit code, a reason and a message.
type state struct {
	running bool
	code    int32
	reason  string
	message string
}

var (
	running = state{running: true}
	waiting = state{}
	ok      = state{code: 0, reason: "Completed"}
	skipped = state{code: sequencer.ExitSkipped, reason: "Error"}
)

func exited(code int32, message string) state {
	return state{code: code, reason: "Error", message: message}
}

func (s state) status(name string) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{Name: name}
	switch {
	case s.running:
		cs.State.Running = &corev1.ContainerStateRunning{}
	case s == waiting:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "PodInitializing"}
	default:
		cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: s.code, Reason: s.reason, Message: s.message}
	}
	return cs
}

// testPod returns a pod of steps a, b and c in the given states, the
// statuses listed in another order than the containers, as the kubelet may.
func testPod(phase corev1.PodPhase, init state, steps ...state) *corev1.Pod {
	pod := &corev1.Pod{Status: corev1.PodStatus{Phase: phase}}
	pod.Spec.InitContainers = []corev1.Container{{Name: ToolsContainer}}
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{init.status(ToolsContainer)}
	for i, s := range steps {
		name := string(rune('a' + i))
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: name})
		pod.Status.ContainerStatuses = append([]corev1.ContainerStatus{s.status(name)}, pod.Status.ContainerStatuses...)
	}
	return pod
}

func TestResults(t *testing.T) {
	declared := []batchv1beta1.Result{{Name: "sum"}, {Name: "status"}, {Name: "unwritten"}}
	all := func(sum, status string) []batchv1beta1.WorkflowRunResult {
		return []batchv1beta1.WorkflowRunResult{{Name: "sum", Value: sum}, {Name: "status", Value: status}, {Name: "unwritten", Value: ""}}
	}
	msg := func(t *testing.T, r ...sequencer.Result) string {
		m, err := sequencer.EncodeResults(r)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	testCases := []struct {
		name     string
		pod      func(t *testing.T) *corev1.Pod
		declared []batchv1beta1.Result
		want     []batchv1beta1.WorkflowRunResult
		wantErr  string
	}{
		{
			name: "last step",
			pod: func(t *testing.T) *corev1.Pod {
				return testPod(corev1.PodSucceeded, ok, ok, ok, state{reason: "Completed", message: msg(t,
					sequencer.Result{Name: "status", Value: "I am OK\n"}, sequencer.Result{Name: "sum", Value: "3"},
					sequencer.Result{Name: "unwritten", Value: ""}, sequencer.Result{Name: "undeclared", Value: "x"})})
			},
			declared: declared,
			want:     all("3", "I am OK\n"),
		},
		{
			name: "failed step",
			pod: func(t *testing.T) *corev1.Pod {
				return testPod(corev1.PodFailed, ok, ok, exited(3, msg(t, sequencer.Result{Name: "sum", Value: "1"})), skipped)
			},
			declared: declared,
			want:     all("1", ""),
		},
		{
			name:     "no message yet",
			pod:      func(*testing.T) *corev1.Pod { return testPod(corev1.PodRunning, ok, ok, running, waiting) },
			declared: declared,
			want:     all("", ""),
		},
		{
			name:     "none declared",
			pod:      func(t *testing.T) *corev1.Pod { return testPod(corev1.PodSucceeded, ok, state{message: msg(t)}) },
			declared: nil,
			want:     nil,
		},
		{
			name: "too large",
			pod: func(*testing.T) *corev1.Pod {
				return testPod(corev1.PodFailed, ok, ok, ok, exited(sequencer.ExitResultsError, sequencer.ErrorPrefix+"result sum: 5000 bytes, over the 4096 bytes of a termination message that hold all results"))
			},
			declared: declared,
			wantErr:  "results of step c: result sum: 5000 bytes, over the 4096 bytes",
		},
		{
			name:     "not ours",
			pod:      func(*testing.T) *corev1.Pod { return testPod(corev1.PodFailed, ok, exited(1, "some log tail")) },
			declared: declared,
			wantErr:  `results of step a: the termination message "some log tail" holds no results`,
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Results(tc.pod(t), tc.declared)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Results = %v, %v; want error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Results (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOutcome(t *testing.T) {
	testCases := []struct {
		name          string
		pod           *corev1.Pod
		wantDone      bool
		wantSucceeded bool
		wantMessage   string
	}{
		{name: "pending", pod: testPod(corev1.PodPending, running, waiting, waiting, waiting)},
		{name: "first step running", pod: testPod(corev1.PodRunning, ok, running, running, running)},
		{name: "two steps done", pod: testPod(corev1.PodRunning, ok, ok, ok, running)},
		{name: "all done, pod still running", pod: testPod(corev1.PodRunning, ok, ok, ok, ok), wantDone: true, wantSucceeded: true},
		{name: "succeeded", pod: testPod(corev1.PodSucceeded, ok, ok, ok, ok), wantDone: true, wantSucceeded: true},
		{
			name:     "step failed, later ones skipped",
			pod:      testPod(corev1.PodFailed, ok, ok, exited(2, ""), skipped),
			wantDone: true, wantMessage: "step b failed (exit code 2)",
		},
		{
			// The failed step's container was killed whole: the next one
			// waits forever.
			name:     "step OOM-killed, next one waiting",
			pod:      testPod(corev1.PodRunning, ok, state{code: 137, reason: "OOMKilled"}, running, running),
			wantDone: true, wantMessage: "step a failed (exit code 137, OOMKilled)",
		},
		{
			name:     "skip seen before the failure",
			pod:      testPod(corev1.PodRunning, ok, ok, running, skipped),
			wantDone: true, wantMessage: "step c was skipped: an earlier step failed",
		},
		{name: "results too large", pod: testPod(corev1.PodFailed, ok, ok, ok, exited(sequencer.ExitResultsError, "")), wantDone: true, wantMessage: "step c failed to report its results (exit code 202)"},
		{name: "command not found", pod: testPod(corev1.PodFailed, ok, exited(127, ""), skipped, skipped), wantDone: true, wantMessage: "step a failed: command not found (exit code 127)"},
		{name: "not executable", pod: testPod(corev1.PodFailed, ok, exited(126, ""), skipped, skipped), wantDone: true, wantMessage: "step a failed: command not executable (exit code 126)"},
		{name: "sequencer error", pod: testPod(corev1.PodFailed, ok, exited(sequencer.ExitToolError, ""), skipped), wantDone: true, wantMessage: "step a failed in the step sequencer (exit code 203)"},
		{
			name:     "init container failed",
			pod:      testPod(corev1.PodFailed, exited(1, "no space left on device"), waiting, waiting),
			wantDone: true, wantMessage: "init container workflow-tools failed (exit code 1)",
		},
		{
			name: "evicted",
			pod: func() *corev1.Pod {
				p := testPod(corev1.PodFailed, ok, ok, running)
				p.Status.Reason, p.Status.Message = "Evicted", "The node was low on resource: memory."
				return p
			}(),
			wantDone: true, wantMessage: "the pod failed: Evicted: The node was low on resource: memory.",
		},
		{name: "no statuses yet", pod: &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			done, succeeded, msg := Outcome(tc.pod)
			if done != tc.wantDone || succeeded != tc.wantSucceeded || msg != tc.wantMessage {
				t.Errorf("Outcome = %v, %v, %q; want %v, %v, %q", done, succeeded, msg, tc.wantDone, tc.wantSucceeded, tc.wantMessage)
			}
		})
	}
}
