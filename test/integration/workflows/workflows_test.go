package workflows

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

func TestWorkflows(t *testing.T) {
	e := startEnv(t)
	for name, test := range map[string]func(*testing.T, *env){
		"Pod":                    testPod,
		"PodFailed":              testPodFailed,
		"SeqPodResults":          testSeqPodResults,
		"SeqPodStepKilled":       testSeqPodStepKilled,
		"DAGDiamond":             testDAGDiamond,
		"DAGResultsAndWhen":      testDAGResultsAndWhen,
		"DAGRetries":             testDAGRetries,
		"DAGStopAll":             testDAGStopAll,
		"DAGStopDependent":       testDAGStopDependent,
		"RetryFromFailedNodes":   testRetryFromFailedNodes,
		"ResourceJob":            testResourceJob,
		"ResourceForbidden":      testResourceForbidden,
		"GenericJobTemplate":     testGenericJobTemplate,
		"Timeout":                testTimeout,
		"Refused":                testRefused,
		"MissingTemplateIsError": testMissingTemplate,
		"SubstitutionTooLong":    testSubstitutionTooLong,
		"ApplyNullDescriptions":  testApplyNullDescriptions,
		"ResourceOtherNamespace": testResourceOtherNamespace,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, e)
		})
	}
}

const podTemplate = `
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: hello
spec:
  params:
    - name: message
      default: hi
  workspaces:
    - name: data
  type: Pod
  pod:
    containers:
      - name: hello
        image: ubuntu
        command: ["sh", "-c"]
        args: ["echo $(params.message) > $(workspaces.data.path)/out.txt"]
`

func testPod(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, podTemplate+`
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: run
spec:
  workflowTemplateRef: hello
  serviceAccountName: runner
  params:
    - name: message
      value: Hello TensorStack!
  workspaces:
    - name: data
      subPath: out
      persistentVolumeClaim:
        claimName: data
`)
	pod := e.waitPod(ctx, t, ns, "run")
	if !strings.HasPrefix(pod.Name, "run-pod-") || len(pod.Name) != len("run-pod-")+5 {
		t.Errorf("pod name %s, want run-pod-xxxxx", pod.Name)
	}
	if got := pod.Labels[batchv1beta1.WorkflowRunLabel]; got != "run" {
		t.Errorf("pod label %s = %q", batchv1beta1.WorkflowRunLabel, got)
	}
	c := pod.Spec.Containers[0]
	if want := "echo Hello TensorStack! > /t9k/workspaces/data/out.txt"; c.Args[0] != want {
		t.Errorf("args %q, want %q", c.Args[0], want)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever || pod.Spec.ServiceAccountName != "runner" {
		t.Errorf("restartPolicy %s serviceAccount %s", pod.Spec.RestartPolicy, pod.Spec.ServiceAccountName)
	}
	var claim string
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	if claim != "data" || len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/t9k/workspaces/data" || c.VolumeMounts[0].SubPath != "out" {
		t.Errorf("claim %q mounts %+v", claim, c.VolumeMounts)
	}
	if wr := e.waitPhase(ctx, t, ns, "run", batchv1beta1.NodeRunning); wr.Status.WorkflowTemplateSpec == nil || wr.Status.StartTime == nil {
		t.Errorf("a running run records its resolved template and start time: %+v", wr.Status)
	}
	e.finishPod(ctx, t, pod, corev1.PodSucceeded, "")
	wr := e.waitPhase(ctx, t, ns, "run", batchv1beta1.NodeSucceeded)
	conds := map[batchv1beta1.WorkflowRunConditionType]corev1.ConditionStatus{}
	for _, c := range wr.Status.Conditions {
		conds[c.Type] = c.Status
	}
	if conds[batchv1beta1.WorkflowRunRunning] != corev1.ConditionFalse || conds[batchv1beta1.WorkflowRunCompleted] != corev1.ConditionTrue || wr.Status.CompletionTime == nil {
		t.Errorf("conditions %+v completion %v", wr.Status.Conditions, wr.Status.CompletionTime)
	}
	if wr.Labels[batchv1beta1.WorkflowTemplateLabel] != "hello" {
		t.Errorf("run labels %v, want %s=hello", wr.Labels, batchv1beta1.WorkflowTemplateLabel)
	}
}

func testPodFailed(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, `
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: embedded
spec:
  workflowTemplateSpec:
    type: Pod
    pod:
      containers:
        - name: hello
          image: ubuntu:latest
          command: ["echo"]
          args: ["Hello TensorStack!"]
`)
	pod := e.waitPod(ctx, t, ns, "embedded")
	e.finishPod(ctx, t, pod, corev1.PodFailed, "")
	wr := e.waitPhase(ctx, t, ns, "embedded", batchv1beta1.NodeFailed)
	if !strings.Contains(wr.Status.Message, "container hello exited with code 1") {
		t.Errorf("message %q does not say which container failed", wr.Status.Message)
	}
}

func testSeqPodResults(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, addTemplate+`
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: add
spec:
  workflowTemplateRef: add-workflowtemplate
  params:
    - {name: first, value: "2"}
    - {name: second, value: "3"}
`)
	pod := e.waitPod(ctx, t, ns, "add")
	var step *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == "add" {
			step = &pod.Spec.Containers[i]
		}
	}
	if step == nil {
		t.Fatalf("no step container add in %+v", pod.Spec.Containers)
	}
	env := map[string]string{}
	for _, v := range step.Env {
		env[v.Name] = v.Value
	}
	if env["OP1"] != "2" || env["OP2"] != "3" || !strings.Contains(strings.Join(step.Args, " "), "/t9k/results/sum") {
		t.Errorf("step env %v args %q", env, step.Args)
	}
	e.finishPod(ctx, t, pod, corev1.PodSucceeded, results("sum", "5"))
	wr := e.waitPhase(ctx, t, ns, "add", batchv1beta1.NodeSucceeded)
	if len(wr.Status.Results) != 1 || wr.Status.Results[0] != (batchv1beta1.WorkflowRunResult{Name: "sum", Value: "5"}) {
		t.Errorf("results %+v", wr.Status.Results)
	}
}

func testSeqPodStepKilled(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, `
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: steps
spec:
  workflowTemplateSpec:
    seqPod:
      steps:
        - {name: first, image: ubuntu, command: ["train"]}
        - {name: second, image: ubuntu, command: ["report"]}
`)
	pod := e.waitPod(ctx, t, ns, "steps")
	// The first step was killed before it could record its failure: the
	// second waits for ever and the pod stays Running.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &corev1.Pod{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return err
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{
			{Name: "first", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}},
			{Name: "second", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		}
		return e.c.Status().Update(ctx, p)
	})
	if err != nil {
		t.Fatal(err)
	}
	wr := e.waitPhase(ctx, t, ns, "steps", batchv1beta1.NodeFailed)
	if !strings.Contains(wr.Status.Message, "step first") || !strings.Contains(wr.Status.Message, "137") {
		t.Errorf("message %q does not name the killed step", wr.Status.Message)
	}
	testutil.Poll(ctx, t, "the hung pod deleted", func() (bool, string, error) {
		p := &corev1.Pod{}
		err := e.c.Get(ctx, client.ObjectKeyFromObject(pod), p)
		return client.IgnoreNotFound(err) == nil && (err != nil || !p.DeletionTimestamp.IsZero()), "pod still there", nil
	})
}

// addTemplate and sumThree are the seed's result-passing example.
const addTemplate = `
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: add-workflowtemplate
spec:
  params:
    - name: first
      description: the first operand
    - name: second
      description: the second operand
  results:
    - name: sum
      description: the sum of the first and second operand
  type: SeqPod
  seqPod:
    steps:
      - name: add
        image: ubuntu
        resources:
          limits:
            cpu: 100m
            memory: 100Mi
        env:
          - name: OP1
            value: $(params.first)
          - name: OP2
            value: $(params.second)
        command: ["/bin/sh", "-c"]
        args:
          - echo -n $((${OP1}+${OP2})) | tee $(results.sum.path);
`

const sumThree = `
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: sum-three-workflowtemplate
spec:
  params:
    - name: first
    - name: second
    - name: third
  type: DAG
  dag:
    templates:
      - name: first-add
        workflowTemplateRef: add-workflowtemplate
        params:
          - name: first
            value: $(params.first)
          - name: second
            value: $(params.second)
      - name: second-add
        workflowTemplateRef: add-workflowtemplate
        params:
          - name: first
            value: $(templates.first-add.results.sum)
          - name: second
            value: $(params.third)
      - name: only-if-big
        workflowTemplateRef: hello
        when:
          - input: $(templates.second-add.results.sum)
            operator: in
            values: ["100"]
        workspaces:
          - name: data
            workspace: data
  workspaces:
    - name: data
  results:
    - name: total-sum
      value: $(templates.second-add.results.sum)
    - name: partial-sum
      value: $(templates.first-add.results.sum)
`

func testDAGResultsAndWhen(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, addTemplate+"\n---\n"+podTemplate+"\n---\n"+sumThree+`
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: sum
spec:
  workflowTemplateRef: sum-three-workflowtemplate
  params:
    - {name: first, value: "1"}
    - {name: second, value: "2"}
    - {name: third, value: "4"}
  workspaces:
    - name: data
      emptyDir: {}
`)
	first := e.child(ctx, t, ns, "sum", "first-add")
	if !strings.HasPrefix(first, "sum-first-add-") || len(first) != len("sum-first-add-")+5 {
		t.Errorf("node run %s, want sum-first-add-xxxxx", first)
	}
	if wr := e.run(ctx, t, ns, "sum"); wr.Status.Nodes["second-add"].WorkflowRunName != "" {
		t.Fatalf("second-add started before the node whose result it uses: %+v", wr.Status.Nodes)
	}
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, first), corev1.PodSucceeded, results("sum", "3"))
	second := e.child(ctx, t, ns, "sum", "second-add")
	if p := e.run(ctx, t, ns, second).Spec.Params; len(p) != 2 || p[0].Value != "3" || p[1].Value != "4" {
		t.Errorf("second-add params %+v, want first=3 second=4", p)
	}
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, second), corev1.PodSucceeded, results("sum", "7"))
	wr := e.waitPhase(ctx, t, ns, "sum", batchv1beta1.NodeSucceeded)
	if got := fmt.Sprint(wr.Status.Results); got != "[{total-sum 7} {partial-sum 3}]" {
		t.Errorf("results %s", got)
	}
	skipped := wr.Status.Nodes["only-if-big"]
	if skipped.Phase != batchv1beta1.NodeSkipped || len(skipped.WhenExpressions) != 1 || skipped.WhenExpressions[0].Input != "7" {
		t.Errorf("only-if-big %+v, want Skipped with the substituted when expression", skipped)
	}
	if wr.Status.Message != "All nodes in DAG have succeeded" {
		t.Errorf("message %q", wr.Status.Message)
	}
}

// diamond is the seed's DAG example.
const diamond = `
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: pod-workflowtemplate-sample
spec:
  type: Pod
  pod:
    containers:
      - name: hello
        image: ubuntu
        command: ["sh", "-c"]
        args: ["echo Hello World!"]
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: dag-workflowtemplate-sample
spec:
  type: DAG
  dag:
    templates:
      - name: a
        workflowTemplateRef: pod-workflowtemplate-sample
        dependencies: []
      - name: b1
        workflowTemplateRef: pod-workflowtemplate-sample
        dependencies: ["a"]
      - name: b2
        workflowTemplateRef: pod-workflowtemplate-sample
        dependencies: ["a"]
      - name: c
        workflowTemplateRef: pod-workflowtemplate-sample
        dependencies: ["b1", "b2"]
`

func testDAGDiamond(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, diamond+`
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: dag
spec:
  workflowTemplateRef: dag-workflowtemplate-sample
`)
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, e.child(ctx, t, ns, "dag", "a")), corev1.PodSucceeded, "")
	b1, b2 := e.child(ctx, t, ns, "dag", "b1"), e.child(ctx, t, ns, "dag", "b2")
	if wr := e.run(ctx, t, ns, "dag"); wr.Status.Nodes["c"].WorkflowRunName != "" {
		t.Fatalf("c started before b1 and b2 ended: %s", nodePhases(wr))
	}
	child := e.run(ctx, t, ns, b1)
	if child.Spec.Depth != 1 || child.Labels[batchv1beta1.WorkflowRunNodeLabel] != "b1" || !metav1.IsControlledBy(child, e.run(ctx, t, ns, "dag")) {
		t.Errorf("node run depth %d labels %v owners %+v", child.Spec.Depth, child.Labels, child.OwnerReferences)
	}
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, b1), corev1.PodSucceeded, "")
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, b2), corev1.PodSucceeded, "")
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, e.child(ctx, t, ns, "dag", "c")), corev1.PodSucceeded, "")
	wr := e.waitPhase(ctx, t, ns, "dag", batchv1beta1.NodeSucceeded)
	if got := nodePhases(wr); got != "a=Succeeded b1=Succeeded b2=Succeeded c=Succeeded" {
		t.Errorf("nodes %s", got)
	}
}

// failingDAG is a DAG of the diamond's pod template where a is retried
// retries times, with the failure strategy.
func failingDAG(strategy string, retries int) string {
	return fmt.Sprintf(`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: dag
spec:
  type: DAG
  dag:
    failureStrategy: %s
    templates:
      - name: a
        workflowTemplateRef: pod-workflowtemplate-sample
        retries: %d
      - name: b
        workflowTemplateRef: pod-workflowtemplate-sample
        dependencies: ["a"]
      - name: c
        workflowTemplateRef: pod-workflowtemplate-sample
        dependencies: ["b"]
      - name: other
        workflowTemplateRef: pod-workflowtemplate-sample
      - name: after-other
        workflowTemplateRef: pod-workflowtemplate-sample
        dependencies: ["other"]
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: run
spec:
  workflowTemplateRef: dag
`, strategy, retries)
}

// podTemplateOnly is the diamond's node template.
var podTemplateOnly = strings.SplitN(diamond, "\n---\n", 2)[0]

func testDAGRetries(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, podTemplateOnly+"\n---\n"+failingDAG("StopAllWorkflowTemplates", 2))
	first := e.child(ctx, t, ns, "run", "a")
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, first), corev1.PodFailed, "")
	var second string
	testutil.Poll(ctx, t, "a retried", func() (bool, string, error) {
		wr := e.run(ctx, t, ns, "run")
		second = wr.Status.Nodes["a"].WorkflowRunName
		return second != "" && second != first, fmt.Sprintf("nodes %+v", wr.Status.Nodes), nil
	})
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, second), corev1.PodSucceeded, "")
	for _, n := range []string{"b", "c", "other", "after-other"} {
		e.finishPod(ctx, t, e.waitPod(ctx, t, ns, e.child(ctx, t, ns, "run", n)), corev1.PodSucceeded, "")
	}
	wr := e.waitPhase(ctx, t, ns, "run", batchv1beta1.NodeSucceeded)
	if wr.Status.Nodes["a"].Retries != 1 || len(wr.Status.RetriedStatus) != 1 || wr.Status.RetriedStatus[0].Node != "a" ||
		wr.Status.RetriedStatus[0].WorkflowRunName != first || wr.Status.RetriedStatus[0].Phase != batchv1beta1.NodeFailed {
		t.Errorf("retries %d retriedStatus %+v", wr.Status.Nodes["a"].Retries, wr.Status.RetriedStatus)
	}
}

func testDAGStopAll(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, podTemplateOnly+"\n---\n"+failingDAG("StopAllWorkflowTemplates", 0))
	a, other := e.child(ctx, t, ns, "run", "a"), e.child(ctx, t, ns, "run", "other")
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, a), corev1.PodFailed, "")
	// other still runs: running nodes always finish, and the DAG waits.
	testutil.Poll(ctx, t, "a failed", func() (bool, string, error) {
		wr := e.run(ctx, t, ns, "run")
		return wr.Status.Nodes["a"].Phase == batchv1beta1.NodeFailed, nodePhases(wr), nil
	})
	if wr := e.run(ctx, t, ns, "run"); wr.Status.Phase != batchv1beta1.NodeRunning {
		t.Fatalf("the DAG ended (%s) while node other runs", wr.Status.Phase)
	}
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, other), corev1.PodSucceeded, "")
	wr := e.waitPhase(ctx, t, ns, "run", batchv1beta1.NodeFailed)
	if got := nodePhases(wr); got != "a=Failed after-other=Skipped b=Skipped c=Skipped other=Succeeded" {
		t.Errorf("nodes %s", got)
	}
	for _, n := range []string{"b", "c", "after-other"} {
		if wr.Status.Nodes[n].WorkflowRunName != "" {
			t.Errorf("node %s was started after a failed under StopAllWorkflowTemplates", n)
		}
	}
}

func testDAGStopDependent(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, podTemplateOnly+"\n---\n"+failingDAG("StopDependentWorkflowTemplates", 0))
	a, other := e.child(ctx, t, ns, "run", "a"), e.child(ctx, t, ns, "run", "other")
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, a), corev1.PodFailed, "")
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, other), corev1.PodSucceeded, "")
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, e.child(ctx, t, ns, "run", "after-other")), corev1.PodSucceeded, "")
	wr := e.waitPhase(ctx, t, ns, "run", batchv1beta1.NodeFailed)
	if got := nodePhases(wr); got != "a=Failed after-other=Succeeded b=Skipped c=Skipped other=Succeeded" {
		t.Errorf("nodes %s", got)
	}
	if wr.Status.Nodes["c"].WorkflowRunName != "" {
		t.Error("c, which depends on a through b, was started")
	}
}

func testRetryFromFailedNodes(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, podTemplateOnly+"\n---\n"+failingDAG("StopDependentWorkflowTemplates", 0))
	a, other := e.child(ctx, t, ns, "run", "a"), e.child(ctx, t, ns, "run", "other")
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, other), corev1.PodSucceeded, "")
	afterOther := e.child(ctx, t, ns, "run", "after-other")
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, afterOther), corev1.PodSucceeded, "")
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, a), corev1.PodFailed, "")
	e.waitPhase(ctx, t, ns, "run", batchv1beta1.NodeFailed)

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		wr := e.run(ctx, t, ns, "run")
		if wr.Annotations == nil {
			wr.Annotations = map[string]string{}
		}
		wr.Annotations[batchv1beta1.RetryAnnotation] = "1"
		return e.c.Update(ctx, wr)
	})
	if err != nil {
		t.Fatal(err)
	}
	var a2 string
	testutil.Poll(ctx, t, "a run again", func() (bool, string, error) {
		wr := e.run(ctx, t, ns, "run")
		a2 = wr.Status.Nodes["a"].WorkflowRunName
		return a2 != "" && a2 != a && wr.Status.Phase == batchv1beta1.NodeRunning, nodePhases(wr), nil
	})
	wr := e.run(ctx, t, ns, "run")
	if wr.Status.Nodes["other"].WorkflowRunName != other || wr.Status.Nodes["after-other"].WorkflowRunName != afterOther {
		t.Errorf("succeeded nodes were not kept: %+v", wr.Status.Nodes)
	}
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, a2), corev1.PodSucceeded, "")
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, e.child(ctx, t, ns, "run", "b")), corev1.PodSucceeded, "")
	e.finishPod(ctx, t, e.waitPod(ctx, t, ns, e.child(ctx, t, ns, "run", "c")), corev1.PodSucceeded, "")
	wr = e.waitPhase(ctx, t, ns, "run", batchv1beta1.NodeSucceeded)
	if len(wr.Status.RetriedStatus) != 1 || wr.Status.RetriedStatus[0].Phase != batchv1beta1.NodeFailed || wr.Status.RetriedStatus[0].Node != "" {
		t.Errorf("retriedStatus %+v, want the failed attempt", wr.Status.RetriedStatus)
	}
	var runs batchv1beta1.WorkflowRunList
	if err := e.c.List(ctx, &runs, client.InNamespace(ns), client.MatchingLabels{batchv1beta1.WorkflowRunNodeLabel: "other"}); err != nil {
		t.Fatal(err)
	}
	if len(runs.Items) != 1 {
		t.Errorf("node other ran %d times, want once", len(runs.Items))
	}
}

// jobResource is the seed's Resource example, a batch/v1 Job.
const jobResource = `
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: resource-workflowtemplate-sample
spec:
  type: Resource
  params:
    - name: digits
      default: "2000"
  resource:
    manifest: |
      apiVersion: batch/v1
      kind: Job
      metadata:
        generateName: pi-job-
      spec:
        template:
          metadata:
            name: pi
          spec:
            containers:
            - name: pi
              image: perl
              command: ["perl",  "-Mbignum=bpi", "-wle", "print bpi($(params.digits))"]
            restartPolicy: Never
        backoffLimit: 4
    successRules:
      fieldSelector: status.succeeded > 0
    failureRules:
      fieldSelector: status.failed > 3
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: resource-workflowtemplate-sample-run
spec:
  workflowTemplateRef: resource-workflowtemplate-sample
  serviceAccountName: managed-project-sa
`

// grantJobs lets the service account managed-project-sa of ns manage Jobs.
func (e *env) grantJobs(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "managed-project-sa"}},
		(&rbacRole{ns}).role(), (&rbacRole{ns}).binding(),
	}
	for _, o := range objs {
		if err := e.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

func testResourceJob(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.grantJobs(ctx, t, ns)
	e.apply(ctx, t, ns, jobResource)
	var job *jobObject
	testutil.Poll(ctx, t, "the Job", func() (bool, string, error) {
		wr := e.run(ctx, t, ns, "resource-workflowtemplate-sample-run")
		if wr.Status.ResourceName == "" {
			return false, string(wr.Status.Phase) + ": " + wr.Status.Message, nil
		}
		var err error
		job, err = e.job(ctx, ns, wr.Status.ResourceName)
		return err == nil, fmt.Sprint(err), nil
	})
	if !strings.HasPrefix(job.Name, "pi-job-") || !strings.Contains(strings.Join(job.command(), " "), "bpi(2000)") {
		t.Errorf("job %s command %q", job.Name, job.command())
	}
	if wr := e.run(ctx, t, ns, "resource-workflowtemplate-sample-run"); wr.Status.Phase != batchv1beta1.NodeRunning {
		t.Fatalf("phase %s before the Job succeeded", wr.Status.Phase)
	}
	job.setSucceeded(ctx, t, e)
	e.waitPhase(ctx, t, ns, "resource-workflowtemplate-sample-run", batchv1beta1.NodeSucceeded)
}

func testResourceForbidden(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	// The service account may not create Jobs: the object is not created
	// with the controller's permissions instead.
	e.apply(ctx, t, ns, jobResource)
	wr := e.waitPhase(ctx, t, ns, "resource-workflowtemplate-sample-run", batchv1beta1.NodeError)
	if !strings.Contains(wr.Status.Message, "forbidden") || !strings.Contains(wr.Status.Message, "managed-project-sa") {
		t.Errorf("message %q does not say the service account may not", wr.Status.Message)
	}
	var jobs jobList
	if err := e.c.List(ctx, jobs.obj(), client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if n := jobs.len(); n != 0 {
		t.Errorf("%d Jobs created", n)
	}
}

func testGenericJobTemplate(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, `
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: generic
spec:
  type: GenericJob
  params:
    - name: epochs
  genericJob:
    metadata:
      labels:
        team: vision
    spec:
      successRules:
        - {"worker": [0]}
      replicaSpecs:
        - type: worker
          replicas: 1
          template:
            spec:
              containers:
                - name: worker
                  image: trainer
                  args: ["--epochs", "$(params.epochs)"]
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: train
spec:
  workflowTemplateRef: generic
  params:
    - {name: epochs, value: "3"}
`)
	job := &batchv1beta1.GenericJob{}
	testutil.Poll(ctx, t, "the GenericJob", func() (bool, string, error) {
		wr := e.run(ctx, t, ns, "train")
		if wr.Status.ResourceName == "" {
			return false, string(wr.Status.Phase) + ": " + wr.Status.Message, nil
		}
		return e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: wr.Status.ResourceName}, job) == nil, "", nil
	})
	if got := job.Spec.ReplicaSpecs[0].Template.Spec.Containers[0].Args; got[1] != "3" || job.Labels["team"] != "vision" {
		t.Errorf("job args %q labels %v", got, job.Labels)
	}
	// The jobs engine creates the worker; the test plays its kubelet.
	pod := &corev1.Pod{}
	testutil.Poll(ctx, t, "the job's worker", func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: job.Name + "-worker-0"}, pod)
		return err == nil, fmt.Sprint(err), nil
	})
	e.finishPod(ctx, t, pod, corev1.PodSucceeded, "")
	e.waitPhase(ctx, t, ns, "train", batchv1beta1.NodeSucceeded)
}

func testTimeout(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, podTemplateOnly+`
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: slow
spec:
  workflowTemplateRef: pod-workflowtemplate-sample
  timeout: 2s
`)
	pod := e.waitPod(ctx, t, ns, "slow")
	wr := e.waitPhase(ctx, t, ns, "slow", batchv1beta1.NodeFailed)
	if !strings.Contains(wr.Status.Message, "timed out after 2s") {
		t.Errorf("message %q", wr.Status.Message)
	}
	testutil.Poll(ctx, t, "the pod deleted", func() (bool, string, error) {
		p := &corev1.Pod{}
		err := e.c.Get(ctx, client.ObjectKeyFromObject(pod), p)
		return client.IgnoreNotFound(err) == nil && (err != nil || !p.DeletionTimestamp.IsZero()), "pod still there", nil
	})
}

func testMissingTemplate(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	// A DAG whose node names a template that does not exist: the DAG is
	// admitted (templates may come later), the node's run is refused.
	e.apply(ctx, t, ns, `
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: run
spec:
  workflowTemplateSpec:
    type: DAG
    dag:
      templates:
        - name: a
          workflowTemplateRef: nowhere
`)
	wr := e.waitPhase(ctx, t, ns, "run", batchv1beta1.NodeFailed)
	if n := wr.Status.Nodes["a"]; n.Phase != batchv1beta1.NodeError || !strings.Contains(n.Message, "nowhere") {
		t.Errorf("node a %+v, want Error naming the template", n)
	}
}

func testRefused(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, addTemplate+"\n---\n"+podTemplateOnly)
	for name, tc := range map[string]struct{ doc, want string }{
		"cycle": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata: {name: cycle}
spec:
  dag:
    templates:
      - {name: a, workflowTemplateRef: pod-workflowtemplate-sample, dependencies: [c]}
      - {name: b, workflowTemplateRef: pod-workflowtemplate-sample, dependencies: [a]}
      - {name: c, workflowTemplateRef: pod-workflowtemplate-sample, dependencies: [b]}
`, "the dependencies form a cycle"},
		"unknownDependency": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata: {name: unknown}
spec:
  dag:
    templates:
      - {name: a, workflowTemplateRef: pod-workflowtemplate-sample, dependencies: [ghost]}
`, `spec.dag.templates[0].dependencies: Not found: "ghost"`},
		"duplicateNode": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata: {name: dup}
spec:
  dag:
    templates:
      - {name: a, workflowTemplateRef: pod-workflowtemplate-sample}
      - {name: a, workflowTemplateRef: pod-workflowtemplate-sample}
`, "Duplicate value"},
		"unknownResult": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata: {name: when}
spec:
  dag:
    templates:
      - name: add
        workflowTemplateRef: add-workflowtemplate
        params: [{name: first, value: "1"}, {name: second, value: "2"}]
      - name: b
        workflowTemplateRef: pod-workflowtemplate-sample
        when: [{input: "$(templates.add.results.product)", operator: in, values: ["2"]}]
`, "spec.dag.templates[1].when[0].input"},
		"missingNodeParam": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata: {name: params}
spec:
  dag:
    templates:
      - {name: add, workflowTemplateRef: add-workflowtemplate, params: [{name: first, value: "1"}]}
`, "needs param second"},
		"manifest": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata: {name: manifest}
spec:
  resource:
    manifest: "kind: [unclosed"
`, "spec.resource.manifest"},
		"fieldSelector": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata: {name: selector}
spec:
  resource:
    manifest: "{apiVersion: v1, kind: ConfigMap}"
    successRules: {fieldSelector: "status.phase ~ Done"}
`, "spec.resource.successRules.fieldSelector"},
		"undeclaredParam": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata: {name: undeclared}
spec:
  pod:
    containers: [{name: c, image: ubuntu, args: ["$(params.nope)"]}]
`, "$(params.nope)"},
		"unknownPodField": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata: {name: typo}
spec:
  pod:
    containers: [{name: c, image: ubuntu, comand: ["x"]}]
`, "spec.pod"},
		"invalidJob": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata: {name: job}
spec:
  type: GenericJob
  genericJob:
    spec:
      replicaSpecs: []
`, "spec.genericJob.spec.replicaSpecs"},
		"runMissingParam": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata: {name: noparam}
spec:
  workflowTemplateRef: add-workflowtemplate
  params: [{name: first, value: "1"}]
`, "the template needs param second"},
		"runBothRefAndSpec": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata: {name: both}
spec:
  workflowTemplateRef: add-workflowtemplate
  workflowTemplateSpec: {pod: {containers: [{name: c, image: ubuntu}]}}
`, "exactly one of spec.workflowTemplateRef and spec.workflowTemplateSpec"},
		"runNeither": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata: {name: neither}
spec: {}
`, "exactly one of spec.workflowTemplateRef and spec.workflowTemplateSpec"},
		"runDepth": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata: {name: deep}
spec:
  workflowTemplateRef: pod-workflowtemplate-sample
  depth: 17
`, "spec.depth"},
		"runTemplateMissing": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata: {name: missing}
spec:
  workflowTemplateRef: nowhere
`, `spec.workflowTemplateRef: Not found: "nowhere"`},
		"runSubPath": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata: {name: subpath}
spec:
  workflowTemplateSpec:
    workspaces: [{name: w}]
    pod: {containers: [{name: c, image: ubuntu}]}
  workspaces: [{name: w, subPath: ../etc, emptyDir: {}}]
`, "spec.workspaces[0].subPath"},
		"triggerFilter": {`
apiVersion: tensorstack.dev/v1beta1
kind: WorkflowTrigger
metadata: {name: trigger}
spec:
  eventSources:
    - eventListenerName: listener
      filters: [{path: "query.x", type: string, values: ["a"]}]
  workflowRunSpec:
    workflowTemplateRef: pod-workflowtemplate-sample
`, "spec.eventSources[0].filters[0].path"},
		"triggerRunMissingParam": {`
apiVersion: tensorstack.dev/v1beta1
kind: WorkflowTrigger
metadata: {name: trigger2}
spec:
  eventSources: [{eventListenerName: listener}]
  workflowRunSpec:
    workflowTemplateRef: add-workflowtemplate
    params: [{name: first, value: "$(body.a)"}]
`, "spec.workflowRunSpec.params: Required value: the template needs param second"},
		"cron": {`
apiVersion: batch.tensorstack.dev/v1beta1
kind: CronWorkflowRun
metadata: {name: cron}
spec:
  schedule: "61 * * * *"
  workflowRun:
    spec:
      workflowTemplateRef: pod-workflowtemplate-sample
`, "spec.schedule"},
	} {
		// Unstructured, so that unknown fields reach the API server.
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(tc.doc), &obj.Object); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		obj.SetNamespace(ns)
		err := e.c.Create(ctx, obj)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", name, err, tc.want)
		}
	}
}
