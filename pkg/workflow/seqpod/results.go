package seqpod

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/workflow/seqpod/sequencer"
)

// Results returns the declared results of a SeqPod pod, in their order,
// from the termination message of the step that ended the sequence: the
// last step to have terminated with a message (the last step, or the one
// that failed; skipped steps write none). A result the steps did not write
// is "", as are all when no step has written a message yet. The error says
// why the results could not be reported, e.g. that they were over 4096
// bytes. No declared results give nil.
func Results(pod *corev1.Pod, declared []batchv1beta1.Result) ([]batchv1beta1.WorkflowRunResult, error) {
	statuses := containerStatuses(pod.Status.ContainerStatuses)
	var msg, from string
	for _, c := range pod.Spec.Containers {
		if term := statuses[c.Name].State.Terminated; term != nil && term.Message != "" {
			msg, from = term.Message, c.Name
		}
	}
	got, err := sequencer.DecodeMessage(msg)
	if err != nil {
		return nil, fmt.Errorf("results of step %s: %w", from, err)
	}
	if len(declared) == 0 {
		return nil, nil
	}
	values := make(map[string]string, len(got))
	for _, r := range got {
		values[r.Name] = r.Value
	}
	results := make([]batchv1beta1.WorkflowRunResult, len(declared))
	for i, d := range declared {
		results[i] = batchv1beta1.WorkflowRunResult{Name: d.Name, Value: values[d.Name]}
	}
	return results, nil
}

// Outcome reports whether the steps of a SeqPod pod are over, whether they
// all succeeded, and if not, why, naming the step. The steps are over when
// the pod has succeeded or failed, or once a step has terminated
// unsuccessfully: the later steps then skip at once, but wait forever when
// the failed step could not record its failure (its container was killed
// whole, e.g. by the OOM killer), so the caller should stop a pod that is
// over but still running. An init container that failed ends the pod too.
func Outcome(pod *corev1.Pod) (done, succeeded bool, message string) {
	if pod.Status.Phase == corev1.PodSucceeded {
		return true, true, ""
	}
	inits := containerStatuses(pod.Status.InitContainerStatuses)
	for _, c := range pod.Spec.InitContainers {
		if term := inits[c.Name].State.Terminated; term != nil && term.ExitCode != 0 {
			return true, false, fmt.Sprintf("init container %s %s", c.Name, describe(term))
		}
	}
	statuses := containerStatuses(pod.Status.ContainerStatuses)
	all := len(pod.Spec.Containers) > 0
	var skipped string
	for _, c := range pod.Spec.Containers {
		term := statuses[c.Name].State.Terminated
		switch {
		case term == nil:
			all = false
		case term.ExitCode == sequencer.ExitSkipped:
			if skipped == "" {
				skipped = fmt.Sprintf("step %s %s", c.Name, describe(term))
			}
		case term.ExitCode != 0:
			return true, false, fmt.Sprintf("step %s %s", c.Name, describe(term))
		}
	}
	switch {
	case skipped != "":
		return true, false, skipped
	case pod.Status.Phase == corev1.PodFailed:
		msg := "the pod failed"
		if pod.Status.Reason != "" {
			msg += ": " + pod.Status.Reason
		}
		if pod.Status.Message != "" {
			msg += ": " + pod.Status.Message
		}
		return true, false, msg
	case all:
		return true, true, ""
	}
	return false, false, ""
}

// describe says how a step or init container ended unsuccessfully.
func describe(term *corev1.ContainerStateTerminated) string {
	var what string
	switch term.ExitCode {
	case sequencer.ExitSkipped:
		return "was skipped: an earlier step failed"
	case sequencer.ExitResultsError:
		what = "failed to report its results"
	case sequencer.ExitToolError:
		what = "failed in the step sequencer"
	case sequencer.ExitNotFound:
		what = "failed: command not found"
	case sequencer.ExitCannotExecute:
		what = "failed: command not executable"
	default:
		what = "failed"
	}
	what += fmt.Sprintf(" (exit code %d", term.ExitCode)
	if term.Reason != "" && term.Reason != "Error" {
		what += ", " + term.Reason
	}
	return what + ")"
}

func containerStatuses(list []corev1.ContainerStatus) map[string]corev1.ContainerStatus {
	m := make(map[string]corev1.ContainerStatus, len(list))
	for _, s := range list {
		m[s.Name] = s
	}
	return m
}
