package seqpod

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

const toolsCmd = "github.com/accelstack/accelstack/cmd/workflow-tools"

// buildTools builds workflow-tools and reads its sources, so that go test
// runs this test again when they change (the test binary links none of
// the sequencer's code).
func buildTools(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "workflow-tools")
	if out, err := exec.Command("go", "build", "-o", bin, toolsCmd).CombinedOutput(); err != nil {
		t.Fatalf("building workflow-tools: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{range .GoFiles}}{{$.Dir}}/{{.}}
{{end}}{{end}}`, toolsCmd).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(out)) {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// TestPodRunsLocally runs the pod BuildPodSpec builds with the real
// workflow-tools: the init container, then every step at once as a process,
// the pod's /t9k directories mapped to a temporary one, each step's
// termination message to a file of its own as the kubelet does. Then
// Outcome and Results read the pod status made from how they ended.
func TestPodRunsLocally(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no /bin/bash for a script without #!")
	}
	bin := buildTools(t)
	root := t.TempDir()
	for _, d := range []string{"tools", "results", "termination", "workspaces"} {
		if err := os.MkdirAll(filepath.Join(root, "t9k", d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	mapPath := func(s string) string { return strings.ReplaceAll(s, "/t9k/", root+"/t9k/") }

	run := func(steps ...batchv1beta1.Step) (*corev1.Pod, []string) {
		t.Helper()
		for _, d := range []string{"tools", "results"} {
			_ = os.RemoveAll(filepath.Join(root, "t9k", d))
			_ = os.MkdirAll(filepath.Join(root, "t9k", d), 0o777)
		}
		old, _ := filepath.Glob(filepath.Join(root, "termination-*"))
		for _, f := range append(old, filepath.Join(root, "order")) {
			_ = os.Remove(f)
		}
		tmpl := &batchv1beta1.SeqPodWorkflowTemplate{Steps: steps}
		spec, err := BuildPodSpec(tmpl, "workflow-tools:test", []batchv1beta1.Result{{Name: "greeting"}, {Name: "sum"}})
		if err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{Spec: spec, Status: corev1.PodStatus{Phase: corev1.PodRunning}}

		// The init container: the image's entrypoint with the args.
		init := spec.InitContainers[0]
		cmd := exec.Command(bin, slices.Collect(func(yield func(string) bool) {
			for _, a := range init.Args {
				yield(mapPath(a))
			}
		})...)
		cmd.Env = os.Environ()
		for _, e := range init.Env {
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("init container: %v\n%s", err, out)
		}
		pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: init.Name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}}

		// The steps, all at once.
		var cmds []*exec.Cmd
		var outputs []*bytes.Buffer
		for i, c := range spec.Containers {
			// The container's view of the directories, where the flags'
			// defaults point.
			args := []string{c.Args[0], "--tools-dir", root + ToolsDir, "--results-dir", root + ResultsDir,
				"--termination-message-path", filepath.Join(root, fmt.Sprintf("termination-%d", i)), "--poll-interval", "10ms"}
			for _, a := range c.Args[1:] {
				args = append(args, mapPath(a))
			}
			cmd := exec.Command(mapPath(c.Command[0]), args...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "ROOT="+root)
			for _, e := range c.Env {
				cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
			}
			out := &bytes.Buffer{}
			cmd.Stdout, cmd.Stderr = out, out
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.WaitDelay = 5 * time.Second
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds, outputs = append(cmds, cmd), append(outputs, out)
		}
		logs := make([]string, len(cmds))
		for i, cmd := range cmds {
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
				t.Errorf("step %d did not end", i)
			}
			msg, _ := os.ReadFile(filepath.Join(root, fmt.Sprintf("termination-%d", i)))
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
				Name:  spec.Containers[i].Name,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: int32(cmd.ProcessState.ExitCode()), Message: string(msg)}},
			})
			logs[i] = outputs[i].String()
		}
		return pod, logs
	}
	order := func() string {
		b, _ := os.ReadFile(filepath.Join(root, "order"))
		return string(b)
	}

	pod, logs := run(
		batchv1beta1.Step{
			Container: corev1.Container{Name: "hello", Args: []string{"World"}},
			// No #!: bash with set -e; [[ ]] is bash's.
			Script: "sleep 0.2\n[[ -n $1 ]] && printf \"Hello $1\" > $ROOT/t9k/results/greeting\necho hello >> order\n",
		},
		batchv1beta1.Step{
			Container: corev1.Container{
				Name: "add", Env: []corev1.EnvVar{{Name: "OP1", Value: "1"}, {Name: "OP2", Value: "2"}},
				Command: []string{"/bin/sh", "-c"}, Args: []string{"sleep 0.1; printf $((${OP1}+${OP2})) > /t9k/results/sum; echo add >> order"},
			},
		},
		batchv1beta1.Step{
			Container: corev1.Container{Name: "bye", Args: []string{"a", "b c"}},
			Script:    "#!/bin/sh\necho \"bye $# $2\" >> order\n",
		},
	)
	if done, succeeded, msg := Outcome(pod); !done || !succeeded {
		t.Errorf("Outcome = %v, %v, %q; want done and succeeded\n%q", done, succeeded, msg, logs)
	}
	if got, want := order(), "hello\nadd\nbye 2 b c\n"; got != want {
		t.Errorf("the steps wrote %q, want %q", got, want)
	}
	results, err := Results(pod, []batchv1beta1.Result{{Name: "sum"}, {Name: "greeting"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]batchv1beta1.WorkflowRunResult{{Name: "sum", Value: "3"}, {Name: "greeting", Value: "Hello World"}}, results); diff != "" {
		t.Errorf("Results (-want +got):\n%s", diff)
	}

	// A failing step stops the rest; its results are reported.
	pod, logs = run(
		batchv1beta1.Step{Container: corev1.Container{Name: "one", Command: []string{"/bin/sh", "-c", "printf 1 > /t9k/results/sum; echo one >> order"}}},
		batchv1beta1.Step{Container: corev1.Container{Name: "two"}, Script: "echo two >> order\nfalse\necho not reached >> order\n"},
		batchv1beta1.Step{Container: corev1.Container{Name: "three", Command: []string{"/bin/sh", "-c", "echo three >> order"}}},
	)
	if done, succeeded, msg := Outcome(pod); !done || succeeded || msg != "step two failed (exit code 1)" {
		t.Errorf("Outcome = %v, %v, %q; want done, failed in step two\n%q", done, succeeded, msg, logs)
	}
	if got, want := order(), "one\ntwo\n"; got != want {
		t.Errorf("the steps wrote %q, want %q", got, want)
	}
	results, err = Results(pod, []batchv1beta1.Result{{Name: "sum"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]batchv1beta1.WorkflowRunResult{{Name: "sum", Value: "1"}}, results); diff != "" {
		t.Errorf("Results (-want +got):\n%s", diff)
	}

	// Results over 4096 bytes fail the step, and Results says so.
	pod, _ = run(batchv1beta1.Step{Container: corev1.Container{Name: "big", Command: []string{"/bin/sh", "-c", `head -c 5000 /dev/zero | tr '\0' x > /t9k/results/greeting`}}})
	if done, succeeded, msg := Outcome(pod); !done || succeeded || msg != "step big failed to report its results (exit code 202)" {
		t.Errorf("Outcome = %v, %v, %q", done, succeeded, msg)
	}
	if _, err := Results(pod, []batchv1beta1.Result{{Name: "greeting"}}); err == nil || !strings.Contains(err.Error(), "result greeting: 5000 bytes, over the 4096 bytes") {
		t.Errorf("Results = %v, want the size error", err)
	}
}
