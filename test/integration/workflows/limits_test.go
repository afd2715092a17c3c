package workflows

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/workflow"
	"github.com/accelstack/accelstack/test/testutil"
)

// testSubstitutionTooLong checks that a run whose params would make the
// controller build a huge string (a 64 KiB param referred to 1000 times in
// one argument: 64 MiB) fails with the param and the field as its reason,
// that a param over 64 KiB is refused, and that a normal run created
// afterwards still gets its pod from the same controllers.
func testSubstitutionTooLong(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	e.apply(ctx, t, ns, podTemplate+`
---
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: amplifier
spec:
  params:
    - name: p
  type: Pod
  pod:
    containers:
      - name: c
        image: ubuntu
        args: ["`+strings.Repeat("$(params.p)", 1000)+`"]
`)
	hostile := func(name string, size int) *batchv1beta1.WorkflowRun {
		return &batchv1beta1.WorkflowRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: batchv1beta1.WorkflowRunSpec{
				WorkflowTemplateRef: "amplifier",
				Params:              []batchv1beta1.Param{{Name: "p", Value: strings.Repeat("x", size)}},
			},
		}
	}
	if err := e.c.Create(ctx, hostile("over", batchv1beta1.MaxParamValueLength+1)); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.params[0].value") {
		t.Errorf("creating a run with a param over %d bytes: %v, want Invalid naming spec.params[0].value", batchv1beta1.MaxParamValueLength, err)
	}
	if err := e.c.Create(ctx, hostile("amplified", batchv1beta1.MaxParamValueLength)); err != nil {
		t.Fatal(err)
	}
	wr := e.waitPhase(ctx, t, ns, "amplified", batchv1beta1.NodeError)
	want := (&workflow.TooLongError{Variable: "params.p", Field: "spec.pod.containers[0].args[0]", Limit: workflow.MaxSubstitutedBytes}).Error()
	if wr.Status.Message != want {
		t.Errorf("message %q, want %q", wr.Status.Message, want)
	}
	completed := false
	for _, c := range wr.Status.Conditions {
		if c.Type == batchv1beta1.WorkflowRunCompleted {
			completed = c.Status == corev1.ConditionTrue && c.Message == want
		}
	}
	if !completed || wr.Status.PodName != "" {
		t.Errorf("conditions %+v podName %q, want Completed with the reason and no pod", wr.Status.Conditions, wr.Status.PodName)
	}

	e.apply(ctx, t, ns, `
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowRun
metadata:
  name: normal
spec:
  workflowTemplateRef: hello
  workspaces:
    - name: data
      emptyDir: {}
`)
	pod := e.waitPod(ctx, t, ns, "normal")
	if got := pod.Spec.Containers[0].Args[0]; got != "echo hi > /t9k/workspaces/data/out.txt" {
		t.Errorf("the normal run's args %q", got)
	}
	var pods corev1.PodList
	if err := e.c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Errorf("%d pods in the namespace, want only the normal run's", len(pods.Items))
	}
}

// testResourceOtherNamespace checks that a Resource template's object in
// another namespace is refused, even where the run's service account may
// create it there: a run creates objects in its own namespace only.
func testResourceOtherNamespace(t *testing.T, e *env) {
	ctx, ns, other := testutil.SubtestContext(t), e.namespace(t), e.namespace(t)
	e.grantJobs(ctx, t, ns)
	// The run's service account may manage Jobs in the other namespace too.
	role, binding := (&rbacRole{other}).role(), (&rbacRole{other}).binding()
	binding.Subjects[0].Namespace = ns
	for _, o := range []client.Object{role, binding} {
		if err := e.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	docs := strings.Replace(jobResource, "        generateName: pi-job-\n", "        generateName: pi-job-\n        namespace: "+other+"\n", 1)
	if docs == jobResource {
		t.Fatal("the manifest has no metadata to put a namespace in")
	}
	e.apply(ctx, t, ns, docs)
	wr := e.waitPhase(ctx, t, ns, "resource-workflowtemplate-sample-run", batchv1beta1.NodeError)
	if want := "the object is in namespace " + other; !strings.Contains(wr.Status.Message, want) {
		t.Errorf("message %q, want it to say %q", wr.Status.Message, want)
	}
	for _, n := range []string{ns, other} {
		var jobs jobList
		if err := e.c.List(ctx, jobs.obj(), client.InNamespace(n)); err != nil {
			t.Fatal(err)
		}
		if jobs.len() != 0 {
			t.Errorf("%d Jobs created in %s", jobs.len(), n)
		}
	}
}
