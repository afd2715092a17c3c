package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

func cpuQuota(n string) func(*schedv1beta1.QueueSpec) {
	return func(s *schedv1beta1.QueueSpec) {
		s.Quota = &schedv1beta1.Quota{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}}
	}
}

func withPriority(p int32, more ...func(*schedv1beta1.QueueSpec)) func(*schedv1beta1.QueueSpec) {
	return func(s *schedv1beta1.QueueSpec) {
		s.Priority = p
		for _, m := range more {
			m(s)
		}
	}
}

// testWorkedExample reproduces the platform manual's preemption example: a
// cluster of 300 cpu; queue A (quota 200, priority 1) runs three 50-cpu
// pods, B (100, 1), C (50, 2) and D (200, 2) one each. A new pod of B is
// blocked (no queue below its priority), one of C is blocked by C's quota,
// and one of D runs by evicting A3, which gets a Preempted event: A is the
// lower-priority queue furthest over its fair share, and A3 its youngest
// pod.
func testWorkedExample(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("example")
	e.node(t, pool, 300, nil, nil)
	a := e.queue(t, pool, withPriority(1, cpuQuota("200")))
	b := e.queue(t, pool, withPriority(1, cpuQuota("100")))
	c := e.queue(t, pool, withPriority(2, cpuQuota("50")))
	d := e.queue(t, pool, withPriority(2, cpuQuota("200")))
	ns := e.namespace(t, nil)
	e.pod(t, ns, "a1", "50", queueLabel(a))
	e.pod(t, ns, "a2", "50", queueLabel(a))
	e.pod(t, ns, "b1", "50", queueLabel(b))
	e.pod(t, ns, "c1", "50", queueLabel(c))
	e.pod(t, ns, "d1", "50", queueLabel(d))
	e.waitBound(ctx, t, ns, "a1", "a2", "b1", "c1", "d1")
	time.Sleep(1100 * time.Millisecond) // creation times have second resolution
	e.pod(t, ns, "a3", "50", queueLabel(a))
	e.waitBound(ctx, t, ns, "a3")

	e.pod(t, ns, "b2", "50", queueLabel(b))
	e.waitUnschedulable(ctx, t, ns, "b2", "Insufficient cpu")
	e.pod(t, ns, "c2", "50", queueLabel(c))
	e.waitUnschedulable(ctx, t, ns, "c2", "would exceed its quota 50")
	e.pod(t, ns, "d2", "50", queueLabel(d))
	e.waitBound(ctx, t, ns, "d2")
	eventually(ctx, t, "a3 gone", func() (bool, string) { return e.get(ctx, t, ns, "a3") == nil, "a3 still exists" })
	e.waitEvent(ctx, t, ns, "a3", "Preempted", fmt.Sprintf("Preempted by %s/d2 (queue %q) on node ", ns, d))
	e.mustStayBound(ctx, t, ns, "a1", "a2", "b1", "c1", "d1")
	e.holdUnbound(ctx, t, time.Second, ns, "b2", "c2")
}

// testNoQueueUntouched: pods of no queue, and pods of other schedulers
// even when labelled with a queue, are never preempted. A node of 6 cpu
// holds one of each and a pod of a low-priority queue, 2 cpu each; a 4-cpu
// pod of a high-priority queue could only get room by evicting two, so it
// evicts nothing and says why.
func testNoQueueUntouched(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("untouched")
	node := e.node(t, pool, 6, nil, nil)
	low := e.queue(t, pool, withPriority(1))
	high := e.queue(t, pool, withPriority(100))
	ns := e.namespace(t, nil)
	noQueue := e.podSpec(ns, "noqueue", "2", nil)
	noQueue.Spec.NodeSelector = map[string]string{poolLabel: pool}
	if err := e.c.Create(ctx, noQueue); err != nil {
		t.Fatal(err)
	}
	// A pod of another scheduler, labelled with the low queue, placed on
	// the node: not the T9k Scheduler's, so never its victim.
	other := e.podSpec(ns, "other", "2", queueLabel(low))
	other.Spec.SchedulerName, other.Spec.NodeName = corev1.DefaultSchedulerName, node.Name
	if err := e.c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	e.pod(t, ns, "low", "2", queueLabel(low))
	e.waitBound(ctx, t, ns, "noqueue", "low", "other")
	e.pod(t, ns, "urgent", "4", queueLabel(high))
	e.waitUnschedulable(ctx, t, ns, "urgent", "evicting pods of lower-priority queues would not make room")
	e.holdUnbound(ctx, t, time.Second, ns, "urgent")
	e.mustStayBound(ctx, t, ns, "noqueue", "low", "other")
}

// mustStayBound checks that the named pods exist and are bound.
func (e *env) mustStayBound(ctx context.Context, t *testing.T, ns string, names ...string) {
	t.Helper()
	if b := e.bound(ctx, t, ns, names...); len(b) != len(names) {
		t.Errorf("of %v only %v are still bound", names, b)
	}
}

// testNonPreemptible: pods of a queue with preemptible: false are never
// evicted, whatever the priority of the queue asking.
func testNonPreemptible(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("keep")
	e.node(t, pool, 4, nil, nil)
	low := e.queue(t, pool, withPriority(1, func(s *schedv1beta1.QueueSpec) { s.Preemptible = ptr.To(false) }))
	high := e.queue(t, pool, withPriority(100))
	ns := e.namespace(t, nil)
	e.pod(t, ns, "kept", "4", queueLabel(low))
	e.waitBound(ctx, t, ns, "kept")
	e.pod(t, ns, "urgent", "4", queueLabel(high))
	e.waitUnschedulable(ctx, t, ns, "urgent", "Insufficient cpu")
	e.holdUnbound(ctx, t, 2*time.Second, ns, "urgent")
	e.mustStayBound(ctx, t, ns, "kept")
}

// testPreemptWholeGroup: evicting one member of a PodGroup evicts the whole
// group, so no gang is left broken; a single pod of the same queue that
// would do as well is preferred when it costs fewer pods.
func testPreemptWholeGroup(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("whole")
	e.node(t, pool, 4, nil, nil)
	e.node(t, pool, 4, nil, nil)
	low := e.queue(t, pool, withPriority(1))
	high := e.queue(t, pool, withPriority(2))
	ns := e.namespace(t, nil)
	pg := e.podGroup(t, ns, low, 2)
	// Four 2-cpu members fill both nodes.
	members := []string{"m-0", "m-1", "m-2", "m-3"}
	for _, m := range members {
		e.pod(t, ns, m, "2", groupLabels(pg, ""))
	}
	e.waitBound(ctx, t, ns, members...)
	e.pod(t, ns, "urgent", "2", queueLabel(high))
	e.waitBound(ctx, t, ns, "urgent")
	eventually(ctx, t, "the whole group evicted", func() (bool, string) {
		left := e.bound(ctx, t, ns, members...)
		return len(left) == 0, "still bound: " + keys(left)
	})
}

func keys(m map[string]string) string {
	s := ""
	for k := range m {
		s += k + " "
	}
	return s
}
