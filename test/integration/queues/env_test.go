package queues

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// env is the control plane the subtests share.
type env struct {
	c client.Client
}

var counter atomic.Int32

// startEnv starts the control plane, the queue webhook configuration of
// deploy/controllers pointed at the in-process controllers, and the
// controllers.
func startEnv(t *testing.T) *env {
	t.Helper()
	cp := harness.StartControlPlane(t)
	installWebhook(t, cp)
	cp.StartControllers(t)
	return &env{c: cp.Client}
}

// installWebhook creates the ValidatingWebhookConfiguration of
// deploy/controllers/queues-webhook.yaml, served where envtest serves
// webhooks, failing closed so that a webhook that serves nothing shows.
func installWebhook(t *testing.T, cp *harness.ControlPlane) {
	t.Helper()
	cp.InstallWebhook(t, "controllers/queues-webhook.yaml", nil)
}

// name returns a name unique in the package's run.
func name(prefix string) string { return fmt.Sprintf("%s-%d", prefix, counter.Add(1)) }

// namespace creates a namespace with labels for one subtest.
func (e *env) namespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	n := name("queues")
	if err := e.c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels}}); err != nil {
		t.Fatal(err)
	}
	return n
}

// queue creates a Queue named after prefix that every namespace may use,
// changed by edit, and returns it.
func (e *env) queue(ctx context.Context, t *testing.T, prefix string, edit func(*schedv1beta1.QueueSpec)) *schedv1beta1.Queue {
	t.Helper()
	q := &schedv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name(prefix)},
		Spec: schedv1beta1.QueueSpec{NamespaceSelector: &metav1.LabelSelector{}}}
	if edit != nil {
		edit(&q.Spec)
	}
	if err := e.c.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
	// The admission webhook reads queues from the controllers' cache: once
	// the queue controller has written a condition, the cache holds it.
	testutil.Poll(ctx, t, "queue "+q.Name+" seen by the controllers", func() (bool, string, error) {
		got := &schedv1beta1.Queue{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(q), got); err != nil {
			return false, "", err
		}
		return len(got.Status.Conditions) > 0, "no conditions yet", nil
	})
	return q
}

// podSpec is a T9k Scheduler pod asking for cpu.
func podSpec(ns, name, cpu string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{SchedulerName: schedv1beta1.SchedulerName, Containers: []corev1.Container{{
			Name: "main", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
		}}},
	}
}

// createPod creates pod, failing the test when it is refused.
func (e *env) createPod(ctx context.Context, t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	if err := e.c.Create(ctx, pod); err != nil {
		t.Fatalf("creating pod %s: %v", pod.Name, err)
	}
	return pod
}

// refused checks that err is an admission refusal containing every part.
func refused(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s was admitted, want a refusal", what)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: refusal %q does not contain %q", what, err, p)
		}
	}
}

// bind binds pod to node as the scheduler does.
func (e *env) bind(ctx context.Context, t *testing.T, pod *corev1.Pod, node string) {
	t.Helper()
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
		Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := e.c.SubResource("binding").Create(ctx, pod, b); err != nil {
		t.Fatalf("binding pod %s: %v", pod.Name, err)
	}
}

// setPhase writes pod's phase as the kubelet would.
func (e *env) setPhase(ctx context.Context, t *testing.T, pod *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	p := &corev1.Pod{}
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = phase
	if err := e.c.Status().Update(ctx, p); err != nil {
		t.Fatalf("setting pod %s %s: %v", p.Name, phase, err)
	}
}

// waitEvent waits for an event about the named object in ns with reason
// and a note containing every part, and returns its note.
func (e *env) waitEvent(ctx context.Context, t *testing.T, ns, regarding, reason string, parts ...string) string {
	t.Helper()
	var note string
	testutil.Poll(ctx, t, reason+" event", func() (bool, string, error) {
		var list eventsv1.EventList
		if err := e.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.Regarding.Name != regarding || ev.Reason != reason {
				continue
			}
			seen = append(seen, ev.Note)
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(ev.Note, p)
			}
			if ok {
				note = ev.Note
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%q", seen), nil
	})
	return note
}

// cpuOf returns the cpu of a resource list as text, "0" when absent.
func cpuOf(r corev1.ResourceList) string {
	q, ok := r[corev1.ResourceCPU]
	if !ok {
		return "0"
	}
	return q.String()
}
