package notebook

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/notebook"
	"github.com/accelstack/accelstack/test/testutil"
)

// manualNotebook is a Notebook as the platform's 2023 manual writes them:
// the container is named after the framework, and spec.runMode says
// whether it runs.
const manualNotebook = `
apiVersion: tensorstack.dev/v1beta1
kind: Notebook
metadata:
  name: %s
spec:
  type: jupyter
  runMode: %s
  template:
    spec:
      containers:
        - name: tensorflow
          image: t9kpublic/tensorflow-2.11.0-notebook-gpu:1.61.0
          volumeMounts:
            - name: workingdir
              mountPath: /t9k/mnt
          resources:
            limits:
              cpu: '4'
              memory: 8Gi
      volumes:
        - name: workingdir
          persistentVolumeClaim:
            claimName: tutorial
`

// createManual creates the manual's Notebook ns/name with runMode, from
// YAML as kubectl sends it, and returns it as read back.
func (e *env) createManual(t *testing.T, ns, name, runMode string) *tensorstackv1beta1.Notebook {
	t.Helper()
	ctx := testutil.SubtestContext(t)
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(fmt.Sprintf(manualNotebook, name, runMode)), &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(ns)
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "tensorstack.dev", Version: "v1beta1", Kind: "Notebook"})
	if err := e.c.Create(ctx, u); err != nil {
		t.Fatalf("creating the manual's Notebook: %v", err)
	}
	nb := e.notebook(ctx, t, ns, name)
	if nb.Spec.RunMode != tensorstackv1beta1.NotebookRunMode(runMode) {
		t.Errorf("spec.runMode %q read back, want %q", nb.Spec.RunMode, runMode)
	}
	return nb
}

// testManualRunning: the manual's Notebook, its container named
// tensorflow and runMode running, is admitted, and its StatefulSet runs
// the user's container as the notebook server; the status follows that
// container.
func (e *env) testManualRunning(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	e.createManual(t, ns, "tf-running", "running")

	sts := e.statefulSet(ctx, t, ns, "tf-running", nil)
	if ptr.Deref(sts.Spec.Replicas, 0) != 1 {
		t.Errorf("replicas %d, want 1", ptr.Deref(sts.Spec.Replicas, -1))
	}
	spec := sts.Spec.Template.Spec
	var main *corev1.Container
	for i := range spec.Containers {
		if spec.Containers[i].Name == "tensorflow" {
			main = &spec.Containers[i]
		}
	}
	if main == nil {
		t.Fatalf("containers %+v, want the user's tensorflow", spec.Containers)
	}
	if main.Image != "t9kpublic/tensorflow-2.11.0-notebook-gpu:1.61.0" {
		t.Errorf("image %q", main.Image)
	}
	hasPrefix, hasPort := false, false
	for _, env := range main.Env {
		hasPrefix = hasPrefix || (env.Name == notebook.NBPrefixEnv && env.Value == "/t9k/notebooks/projects/"+ns+"/name/tf-running")
	}
	for _, p := range main.Ports {
		hasPort = hasPort || p.ContainerPort == notebook.JupyterPort
	}
	if !hasPrefix || !hasPort {
		t.Errorf("tensorflow env %+v ports %+v, want NB_PREFIX and port 8888: it runs the server", main.Env, main.Ports)
	}
	if got := sts.Spec.Template.Annotations["kubectl.kubernetes.io/default-container"]; got != "tensorflow" {
		t.Errorf("default container %q", got)
	}

	pod := e.createPod(ctx, t, sts)
	e.setContainerStatus(ctx, t, pod, "tensorflow", corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}})
	got := e.waitNotebook(ctx, t, ns, "tf-running", "the tensorflow container's state in the status", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Status.Pod != nil && nb.Status.Pod.Status == "ImagePullBackOff"
	})
	if got.Status.Phase != tensorstackv1beta1.NotebookFailed {
		t.Errorf("phase %s, want Failed on the main container's ImagePullBackOff", got.Status.Phase)
	}
	if r := condition(got, tensorstackv1beta1.ConditionReady); r.Reason == notebook.ReasonInvalidSpec {
		t.Errorf("Ready %+v: the spec is valid", r)
	}
}

// testManualSuspended: runMode suspended creates no pod; runMode running
// then brings it, and suspend holds over runMode running.
func (e *env) testManualSuspended(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	e.createManual(t, ns, "tf-suspended", "suspended")

	sts := e.statefulSet(ctx, t, ns, "tf-suspended", nil)
	if ptr.Deref(sts.Spec.Replicas, 1) != 0 {
		t.Errorf("replicas %d, want 0: no pod while runMode is suspended", ptr.Deref(sts.Spec.Replicas, -1))
	}
	e.waitNotebook(ctx, t, ns, "tf-suspended", "Suspended", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Status.Phase == tensorstackv1beta1.NotebookSuspended
	})

	e.update(ctx, t, ns, "tf-suspended", func(nb *tensorstackv1beta1.Notebook) {
		nb.Spec.RunMode = tensorstackv1beta1.NotebookRunModeRunning
	})
	e.statefulSet(ctx, t, ns, "tf-suspended", func(s *appsv1.StatefulSet) bool { return ptr.Deref(s.Spec.Replicas, 0) == 1 })

	// The Resource Keeper suspends by spec.suspend, whatever runMode says.
	e.update(ctx, t, ns, "tf-suspended", func(nb *tensorstackv1beta1.Notebook) { nb.Spec.Suspend = true })
	e.statefulSet(ctx, t, ns, "tf-suspended", func(s *appsv1.StatefulSet) bool { return ptr.Deref(s.Spec.Replicas, 1) == 0 })
}

// setContainerStatus writes a pending pod status whose container name is
// in state.
func (e *env) setContainerStatus(ctx context.Context, t *testing.T, pod *corev1.Pod, name string, state corev1.ContainerState) {
	t.Helper()
	p := &corev1.Pod{}
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodPending
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: name, State: state}}
	if err := e.c.Status().Update(ctx, p); err != nil {
		t.Fatalf("writing the status of pod %s: %v", pod.Name, err)
	}
}
