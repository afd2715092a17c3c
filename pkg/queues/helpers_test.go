package queues

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
)

// rl builds a ResourceList from name, quantity pairs.
func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// pod is a T9k Scheduler pod of namespace ns asking for cpu.
type podOpt func(*corev1.Pod)

func testPod(name string, cpu string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name), Labels: map[string]string{}},
		Spec: corev1.PodSpec{SchedulerName: schedv1beta1.SchedulerName, Containers: []corev1.Container{{
			Name: "main", Resources: corev1.ResourceRequirements{Requests: rl("cpu", cpu)},
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func bound(node string) podOpt { return func(p *corev1.Pod) { p.Spec.NodeName = node } }

func phase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }

func inGroup(g, role string) podOpt {
	return func(p *corev1.Pod) {
		p.Labels[schedv1beta1.GroupNameLabel] = g
		if role != "" {
			p.Labels[schedv1beta1.RoleLabel] = role
		}
	}
}

func inQueue(q string) podOpt { return func(p *corev1.Pod) { p.Labels[schedv1beta1.QueueLabel] = q } }

func deleting() podOpt {
	return func(p *corev1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now }
}

func assertResources(t *testing.T, got, want corev1.ResourceList) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("resources %v, want %v", got, want)
		return
	}
	for n, q := range want {
		if g, ok := got[n]; !ok || g.Cmp(q) != 0 {
			t.Errorf("resources %v, want %v", got, want)
			return
		}
	}
}
