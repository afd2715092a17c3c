package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// env is the control plane the subtests share.
type env struct {
	c client.Client
}

// startEnv starts the control plane, the workflow webhook configuration of
// deploy/controllers pointed at the in-process controllers, and the
// controllers.
func startEnv(t *testing.T) *env {
	t.Helper()
	cp := harness.StartControlPlane(t)
	cp.InstallWebhook(t, "controllers/workflows-webhook.yaml", nil)
	cp.InstallWebhook(t, "controllers/jobs-webhook.yaml", nil)
	cp.StartControllers(t)
	return &env{c: cp.Client}
}

// namespace creates a namespace for one subtest.
func (e *env) namespace(t *testing.T) string {
	t.Helper()
	return testutil.Namespace(t, e.c, "wf", nil)
}

// apply creates the objects of a multi-document YAML in ns.
func (e *env) apply(ctx context.Context, t *testing.T, ns, docs string) {
	t.Helper()
	for _, doc := range strings.Split(docs, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		obj, err := decode(doc)
		if err != nil {
			t.Fatalf("decoding %s: %v", doc, err)
		}
		obj.SetNamespace(ns)
		if err := e.c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s %s: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
}

// decode decodes one workflow object from YAML.
func decode(doc string) (client.Object, error) {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
		return nil, err
	}
	var obj client.Object
	switch meta.Kind {
	case "WorkflowTemplate":
		obj = &batchv1beta1.WorkflowTemplate{}
	case "WorkflowRun":
		obj = &batchv1beta1.WorkflowRun{}
	case "CronWorkflowRun":
		obj = &batchv1beta1.CronWorkflowRun{}
	default:
		return nil, fmt.Errorf("kind %q", meta.Kind)
	}
	return obj, yaml.UnmarshalStrict([]byte(doc), obj)
}

// run gets a run.
func (e *env) run(ctx context.Context, t *testing.T, ns, name string) *batchv1beta1.WorkflowRun {
	t.Helper()
	wr := &batchv1beta1.WorkflowRun{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, wr); err != nil {
		t.Fatal(err)
	}
	return wr
}

// waitPhase waits until the run reaches phase and returns it.
func (e *env) waitPhase(ctx context.Context, t *testing.T, ns, name string, phase batchv1beta1.NodePhase) *batchv1beta1.WorkflowRun {
	t.Helper()
	var wr *batchv1beta1.WorkflowRun
	testutil.Poll(ctx, t, fmt.Sprintf("run %s phase %s", name, phase), func() (bool, string, error) {
		wr = e.run(ctx, t, ns, name)
		return wr.Status.Phase == phase, fmt.Sprintf("phase %q message %q nodes %+v", wr.Status.Phase, wr.Status.Message, wr.Status.Nodes), nil
	})
	return wr
}

// waitPod waits until the run has a pod and returns it.
func (e *env) waitPod(ctx context.Context, t *testing.T, ns, run string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	testutil.Poll(ctx, t, "pod of run "+run, func() (bool, string, error) {
		wr := e.run(ctx, t, ns, run)
		if wr.Status.PodName == "" {
			return false, "no podName; phase " + string(wr.Status.Phase) + ": " + wr.Status.Message, nil
		}
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: wr.Status.PodName}, pod)
		return err == nil, fmt.Sprint(err), nil
	})
	return pod
}

// finishPod writes the pod's status as a kubelet would once it ended: the
// phase, and each container terminated with exit code 0 (or 1 for the last
// when phase is Failed); the last container's termination message is msg.
func (e *env) finishPod(ctx context.Context, t *testing.T, pod *corev1.Pod, phase corev1.PodPhase, msg string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &corev1.Pod{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return err
		}
		p.Status.Phase = phase
		p.Status.ContainerStatuses = nil
		for i, c := range p.Spec.Containers {
			term := &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}
			if i == len(p.Spec.Containers)-1 {
				term.Message = msg
				if phase == corev1.PodFailed {
					term.ExitCode, term.Reason = 1, "Error"
				}
			}
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, State: corev1.ContainerState{Terminated: term}})
		}
		return e.c.Status().Update(ctx, p)
	})
	if err != nil {
		t.Fatalf("finishing pod %s: %v", pod.Name, err)
	}
}

// results encodes results as the step sequencer's termination message.
func results(kv ...string) string {
	var out []batchv1beta1.WorkflowRunResult
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, batchv1beta1.WorkflowRunResult{Name: kv[i], Value: kv[i+1]})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// child returns the run of a DAG node once it exists.
func (e *env) child(ctx context.Context, t *testing.T, ns, run, node string) string {
	t.Helper()
	var name string
	testutil.Poll(ctx, t, fmt.Sprintf("run of node %s of %s", node, run), func() (bool, string, error) {
		wr := e.run(ctx, t, ns, run)
		name = wr.Status.Nodes[node].WorkflowRunName
		return name != "", fmt.Sprintf("nodes %+v phase %s %s", wr.Status.Nodes, wr.Status.Phase, wr.Status.Message), nil
	})
	return name
}

// nodePhases returns node=phase pairs of a run, sorted.
func nodePhases(wr *batchv1beta1.WorkflowRun) string {
	var out []string
	for n, s := range wr.Status.Nodes {
		out = append(out, n+"="+string(s.Phase))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
