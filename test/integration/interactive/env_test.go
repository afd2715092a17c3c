package interactive

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// env is the control plane the subtests share.
type env struct {
	controllers *harness.Controllers
	c           client.Client
}

// startEnv starts the control plane, the webhook configuration of
// deploy/controllers/interactive-webhook.yaml pointed at the in-process
// controllers, and the controllers.
func startEnv(t *testing.T) *env {
	t.Helper()
	cp := harness.StartControlPlane(t)
	cp.InstallWebhook(t, "controllers/interactive-webhook.yaml", nil)
	return &env{controllers: cp.StartControllers(t), c: cp.Client}
}

// namespace creates a namespace for one subtest.
func (e *env) namespace(t *testing.T) string {
	t.Helper()
	return testutil.Namespace(t, e.c, "interactive", nil)
}

// get reads the object ns/name into obj.
func (e *env) get(ctx context.Context, t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatal(err)
	}
}

// update reads the object ns/name into obj, changes it with change and
// writes it, again on a conflict.
func (e *env) update(ctx context.Context, t *testing.T, ns, name string, obj client.Object, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			return err
		}
		change()
		return e.c.Update(ctx, obj)
	})
	if err != nil {
		t.Fatalf("updating %s: %v", name, err)
	}
}

// waitDeployment waits until the Deployment ns/name exists and cond holds
// of it, and returns it.
func (e *env) waitDeployment(ctx context.Context, t *testing.T, ns, name string, cond func(*appsv1.Deployment) bool) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	testutil.Poll(ctx, t, "Deployment "+name, func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, dep)
		return err == nil && (cond == nil || cond(dep)), fmt.Sprintf("error %v replicas %v", err, dep.Spec.Replicas), nil
	})
	return dep
}

// replicas is a Deployment condition: spec.replicas is n.
func replicas(n int32) func(*appsv1.Deployment) bool {
	return func(d *appsv1.Deployment) bool { return d.Spec.Replicas != nil && *d.Spec.Replicas == n }
}

// runPod plays the deployment controller and the kubelet: it creates a pod
// of dep's template, owned by dep (standing in for the ReplicaSet that owns
// a real Deployment's pods), and writes its status, Running and ready, or
// with the container container waiting for reason when that is set.
func (e *env) runPod(ctx context.Context, t *testing.T, dep *appsv1.Deployment, container, reason string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: dep.Namespace, GenerateName: dep.Name + "-",
			Labels:          dep.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(dep, appsv1.SchemeGroupVersion.WithKind("Deployment"))},
		},
		Spec: *dep.Spec.Template.Spec.DeepCopy(),
	}
	pod.Spec.NodeName = "node-1"
	testutil.MustCreate(ctx, t, e.c, pod)
	pod.Status.Phase = corev1.PodRunning
	ready := corev1.ConditionTrue
	for _, c := range pod.Spec.Containers {
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
		if c.Name == container {
			cs.Ready, cs.State = false, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "back-off restarting"}}
			ready = corev1.ConditionFalse
		}
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, cs)
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}
	if err := e.c.Status().Update(ctx, pod); err != nil {
		t.Fatalf("writing the status of pod %s: %v", pod.Name, err)
	}
	return pod
}

// deletePods deletes the pods of namespace with the label key=value, as
// the deployment controller does on a scale to 0.
func (e *env) deletePods(ctx context.Context, t *testing.T, ns, key, value string) {
	t.Helper()
	if err := e.c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.MatchingLabels{key: value}, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
}

// waitEvent waits for an event of reason about the object named regarding.
func (e *env) waitEvent(ctx context.Context, t *testing.T, ns, regarding, reason string) *eventsv1.Event {
	t.Helper()
	var found *eventsv1.Event
	testutil.Poll(ctx, t, "event "+reason+" of "+regarding, func() (bool, string, error) {
		var list eventsv1.EventList
		if err := e.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		var seen []string
		for i, ev := range list.Items {
			if ev.Regarding.Name == regarding && ev.Reason == reason {
				found = &list.Items[i]
				return true, "", nil
			}
			seen = append(seen, ev.Regarding.Name+"/"+ev.Reason)
		}
		return false, strings.Join(seen, ", "), nil
	})
	return found
}

// mustNotContain fails the test when the JSON of obj holds any of values.
func mustNotContain(t *testing.T, obj any, values ...string) {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if strings.Contains(string(b), v) {
			t.Errorf("%q is in %s", v, b)
		}
	}
}

// controllerErrors fails the test on each reconcile error the named
// controllers logged.
func (e *env) controllerErrors(t *testing.T, names ...string) {
	t.Helper()
	for _, line := range strings.Split(e.controllers.Log(), "\n") {
		if !strings.Contains(line, "Reconciler error") {
			continue
		}
		for _, n := range names {
			if strings.Contains(line, `"`+n+`"`) {
				t.Errorf("the %s controller failed: %s", n, line)
			}
		}
	}
}
