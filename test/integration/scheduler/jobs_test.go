package scheduler

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

// testPyTorchGang: a PyTorchTrainingJob with spec.scheduler.t9kScheduler
// gets its PodGroup from the jobs controller and is placed as a gang: its
// three 2-cpu pods wait wholly unbound on a 4-cpu node and are all bound
// once a second node joins; the PodGroup's status then says so.
func testPyTorchGang(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("pytorch")
	e.node(t, pool, 4, nil, nil)
	q := e.queue(t, pool, nil)
	ns := e.namespace(t, nil)
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "pytorch", Image: "pytorch", Command: []string{"python", "train.py"},
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
	}}}}
	job := &batchv1beta1.PyTorchTrainingJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ddp"},
		Spec: batchv1beta1.PyTorchTrainingJobSpec{
			Scheduler: &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{Queue: q}},
			ReplicaSpecs: []batchv1beta1.PyTorchReplicaSpec{
				{Type: "master", Replicas: ptr.To[int32](1), RestartPolicy: batchv1beta1.ReplicaRestartOnFailure, Template: tmpl},
				{Type: "worker", Replicas: ptr.To[int32](2), RestartPolicy: batchv1beta1.ReplicaRestartOnFailure, Template: tmpl},
			},
		},
	}
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	names := []string{"ddp-master-0", "ddp-worker-0", "ddp-worker-1"}
	eventually(ctx, t, "the job's pods", func() (bool, string) {
		var pods corev1.PodList
		if err := e.c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, p := range pods.Items {
			if p.Spec.SchedulerName != schedv1beta1.SchedulerName || p.Labels[schedv1beta1.GroupNameLabel] != "ddp" {
				t.Fatalf("pod %s: schedulerName %q, group %q", p.Name, p.Spec.SchedulerName, p.Labels[schedv1beta1.GroupNameLabel])
			}
		}
		return len(pods.Items) == len(names), fmt.Sprintf("%d pods", len(pods.Items))
	})
	e.holdUnbound(ctx, t, 2*gangTimeout, ns, names...)
	e.node(t, pool, 4, nil, nil)
	e.waitBound(ctx, t, ns, names...)
	e.waitGroupCondition(ctx, t, ns, "ddp", schedv1beta1.PodGroupScheduled, metav1.ConditionTrue, schedv1beta1.ReasonPodGroupScheduled, "")
}

// maxBackoff is kube-scheduler's default podMaxBackoffSeconds, which
// deploy/scheduler keeps.
const maxBackoff = 10 * time.Second

// testFairShare reproduces the manual's dominant-resource example: queues
// A and B of equal priority hold A {cpu 3/6, memory 5/8} (share 5/8) and
// B {cpu 3/8, memory 1/2} (share 1/2); when room for one more pod frees,
// B's pending pod goes first although A's has waited longer.
func testFairShare(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("drf")
	e.node(t, pool, 7, nil, nil)
	quota := func(cpu, mem string) func(*schedv1beta1.QueueSpec) {
		return withPriority(1, func(s *schedv1beta1.QueueSpec) {
			s.Quota = &schedv1beta1.Quota{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
		})
	}
	a := e.queue(t, pool, quota("6", "8Gi"))
	b := e.queue(t, pool, quota("8", "2Gi"))
	c := e.queue(t, pool, withPriority(1))
	ns := e.namespace(t, nil)
	e.podMem(t, ns, "a1", "3", "5Gi", queueLabel(a))
	e.podMem(t, ns, "b1", "3", "1Gi", queueLabel(b))
	e.pod(t, ns, "blocker", "1", queueLabel(c))
	e.waitBound(ctx, t, ns, "a1", "b1", "blocker")
	e.pod(t, ns, "a2", "1", queueLabel(a))
	e.waitUnschedulable(ctx, t, ns, "a2", "Insufficient cpu")
	e.pod(t, ns, "b2", "1", queueLabel(b))
	e.waitUnschedulable(ctx, t, ns, "b2", "Insufficient cpu")
	// Past kube-scheduler's longest backoff (podMaxBackoffSeconds, 10 s),
	// the room that frees is offered to both pods at once.
	time.Sleep(maxBackoff + time.Second)
	if err := e.c.Delete(ctx, e.get(ctx, t, ns, "blocker")); err != nil {
		t.Fatal(err)
	}
	e.waitBound(ctx, t, ns, "b2")
	if b := e.bound(ctx, t, ns, "a2"); len(b) != 0 {
		t.Errorf("a2 of the queue with the larger dominant share was bound first: %v", b)
	}
}

// podMem creates a pod for the T9k Scheduler asking for cpu and memory.
func (e *env) podMem(t *testing.T, ns, name, cpu, mem string, labels map[string]string) {
	t.Helper()
	p := e.podSpec(ns, name, cpu, labels)
	p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse(mem)
	if err := e.c.Create(t.Context(), p); err != nil {
		t.Fatal(err)
	}
}
