package scheduler

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// poolLabel puts a node in the pool of one test case.
const poolLabel = "accelstack.test/pool"

// gangTimeout is the scheduler's --gang-timeout in these tests: long
// enough that a gang reserves all its members within one timeout while
// the cases run in parallel beside other test packages on a loaded
// machine, or it would rest and try again, perhaps each time.
const gangTimeout = 10 * time.Second

// env is the control plane and scheduler the cases share.
type env struct {
	cp *harness.ControlPlane
	c  client.Client
}

var counter atomic.Int32

func startEnv(t *testing.T) *env {
	t.Helper()
	cp := harness.StartControlPlane(t)
	e := &env{cp: cp, c: cp.Client}
	ctx := context.Background()
	if err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: schedv1beta1.ShapesNamespace}}); err != nil {
		t.Fatal(err)
	}
	cp.StartControllers(t)
	cp.StartScheduler(t, "--gang-timeout="+gangTimeout.String(), "-v=3")
	playKubelet(t, e.c)
	return e
}

// playKubelet finishes the deletion of bound pods, as a kubelet would once
// their containers stopped.
func playKubelet(t *testing.T, c client.Client) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			var pods corev1.PodList
			if err := c.List(ctx, &pods); err == nil {
				for i := range pods.Items {
					if p := &pods.Items[i]; p.DeletionTimestamp != nil {
						_ = c.Delete(ctx, p, client.GracePeriodSeconds(0))
					}
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
}

// unique returns a name unique in this test process.
func unique(prefix string) string { return fmt.Sprintf("%s-%d", prefix, counter.Add(1)) }

// namespace creates a namespace with labels.
func (e *env) namespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	name := unique("sched")
	if err := e.c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// node creates a node of pool with cpu cores (and extra capacity) and
// extra labels.
func (e *env) node(t *testing.T, pool string, cpu int64, labels map[string]string, extra corev1.ResourceList) *corev1.Node {
	t.Helper()
	ctx := context.Background()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: unique(pool), Labels: map[string]string{poolLabel: pool}}}
	for k, v := range labels {
		n.Labels[k] = v
	}
	if err := e.c.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.c.Delete(context.Background(), n) })
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: resource.MustParse("1Ti"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	for k, v := range extra {
		capacity[k] = v
	}
	n.Status = corev1.NodeStatus{
		Capacity: capacity, Allocatable: capacity,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}},
	}
	if err := e.c.Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	// The API server taints a new node not-ready until its kubelet reports;
	// this node's "kubelet" has reported Ready above.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(n), n); err != nil {
			return err
		}
		n.Spec.Taints = nil
		return e.c.Update(ctx, n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// queue creates a Queue using the nodes of pool and open to every
// namespace, after mutate.
func (e *env) queue(t *testing.T, pool string, mutate func(*schedv1beta1.QueueSpec)) string {
	t.Helper()
	q := &schedv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: unique("q")},
		Spec: schedv1beta1.QueueSpec{
			NodeSelector:      &metav1.LabelSelector{MatchLabels: map[string]string{poolLabel: pool}},
			NamespaceSelector: &metav1.LabelSelector{},
		},
	}
	if mutate != nil {
		mutate(&q.Spec)
	}
	if err := e.c.Create(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.c.Delete(context.Background(), q) })
	return q.Name
}

// podGroup creates a PodGroup in queue.
func (e *env) podGroup(t *testing.T, ns, queue string, minMember int32, roles ...schedv1beta1.Role) string {
	t.Helper()
	pg := &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: unique("pg")},
		Spec:       schedv1beta1.PodGroupSpec{MinMember: minMember, Queue: queue, Roles: roles},
	}
	if err := e.c.Create(context.Background(), pg); err != nil {
		t.Fatal(err)
	}
	return pg.Name
}

// pod creates a pod for the T9k Scheduler asking for cpu with labels.
func (e *env) pod(t *testing.T, ns, name, cpu string, labels map[string]string) *corev1.Pod {
	t.Helper()
	p := e.podSpec(ns, name, cpu, labels)
	if err := e.c.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// podSpec is the pod e.pod creates.
func (e *env) podSpec(ns, name, cpu string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			SchedulerName:                 schedv1beta1.SchedulerName,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "c", Image: "pause", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
			}}},
		},
	}
}

func queueLabel(q string) map[string]string { return map[string]string{schedv1beta1.QueueLabel: q} }

func groupLabels(pg, role string) map[string]string {
	l := map[string]string{schedv1beta1.GroupNameLabel: pg}
	if role != "" {
		l[schedv1beta1.RoleLabel] = role
	}
	return l
}

// get reads pod again; nil when it is gone.
func (e *env) get(ctx context.Context, t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	return p
}

// bound returns the node of each named pod that is bound, by pod name.
func (e *env) bound(ctx context.Context, t *testing.T, ns string, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		if p := e.get(ctx, t, ns, n); p != nil && p.Spec.NodeName != "" {
			out[n] = p.Spec.NodeName
		}
	}
	return out
}

// waitBound waits until every named pod is bound and returns their nodes.
func (e *env) waitBound(ctx context.Context, t *testing.T, ns string, names ...string) map[string]string {
	t.Helper()
	var got map[string]string
	eventually(ctx, t, "pods bound: "+strings.Join(names, ","), func() (bool, string) {
		got = e.bound(ctx, t, ns, names...)
		return len(got) == len(names), fmt.Sprintf("bound %v", got)
	})
	return got
}

// holdUnbound checks, for d, that none of the named pods is bound or
// nominated to a node. No pod waiting here may preempt, and one that waits
// at Permit is not nominated either: the scheduler turns
// NominatedNodeNameForExpectation off.
func (e *env) holdUnbound(ctx context.Context, t *testing.T, d time.Duration, ns string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if b := e.bound(ctx, t, ns, names...); len(b) > 0 {
			t.Fatalf("pods bound while they should all wait: %v", b)
		}
		for _, n := range names {
			if p := e.get(ctx, t, ns, n); p != nil && p.Status.NominatedNodeName != "" {
				t.Fatalf("pod %s nominated to %s while it should wait", n, p.Status.NominatedNodeName)
			}
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// waitUnschedulable waits until pod's PodScheduled condition is False with
// a message containing want.
func (e *env) waitUnschedulable(ctx context.Context, t *testing.T, ns, name, want string) {
	t.Helper()
	eventually(ctx, t, fmt.Sprintf("pod %s unschedulable with %q", name, want), func() (bool, string) {
		p := e.get(ctx, t, ns, name)
		if p == nil {
			return false, "gone"
		}
		if p.Spec.NodeName != "" {
			t.Fatalf("pod %s bound to %s; want it refused with %q", name, p.Spec.NodeName, want)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return strings.Contains(c.Message, want), c.Message
			}
		}
		return false, "no PodScheduled condition"
	})
}

// waitGroupCondition waits until PodGroup ns/name has condition typ with
// status, reason and a message containing want.
func (e *env) waitGroupCondition(ctx context.Context, t *testing.T, ns, name, typ string, status metav1.ConditionStatus, reason, want string) {
	t.Helper()
	eventually(ctx, t, fmt.Sprintf("PodGroup %s %s=%s (%s) with %q", name, typ, status, reason, want), func() (bool, string) {
		pg := &schedv1beta1.PodGroup{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pg); err != nil {
			return false, err.Error()
		}
		for _, c := range pg.Status.Conditions {
			if c.Type == typ {
				return c.Status == status && c.Reason == reason && strings.Contains(c.Message, want), fmt.Sprintf("%+v", c)
			}
		}
		return false, fmt.Sprintf("conditions %+v", pg.Status.Conditions)
	})
}

// waitGangRejected waits until one of the named pods, members of a gang
// that cannot complete, has been reserved and then rejected at Permit
// (its PodScheduled condition names the gang plugin), failing if one is
// bound meanwhile: a witness that the scheduler has tried the gang, so
// that a window in which none may bind that follows is not passed merely
// by a scheduler that had not got to it.
func (e *env) waitGangRejected(ctx context.Context, t *testing.T, ns string, names ...string) {
	t.Helper()
	eventually(ctx, t, "a member of "+strings.Join(names, ",")+" rejected at Permit", func() (bool, string) {
		var seen []string
		for _, n := range names {
			p := e.get(ctx, t, ns, n)
			if p == nil {
				continue
			}
			if p.Spec.NodeName != "" {
				t.Fatalf("pod %s bound to %s while its gang should wait", n, p.Spec.NodeName)
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
					if strings.Contains(c.Message, "T9kGang") {
						return true, ""
					}
					seen = append(seen, n+": "+c.Message)
				}
			}
		}
		return false, strings.Join(seen, "; ")
	})
}

// waitEvent waits until an event of reason about pod ns/name has a note
// containing want.
func (e *env) waitEvent(ctx context.Context, t *testing.T, ns, name, reason, want string) {
	t.Helper()
	eventually(ctx, t, fmt.Sprintf("event %s on %s with %q", reason, name, want), func() (bool, string) {
		var list eventsv1.EventList
		if err := e.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.Regarding.Name != name {
				continue
			}
			if ev.Reason == reason && strings.Contains(ev.Note, want) {
				return true, ""
			}
			seen = append(seen, ev.Reason+": "+ev.Note)
		}
		return false, fmt.Sprintf("events on %s: %v", name, seen)
	})
}

// requireNoAttempt fails if pod ns/name has a PodScheduled condition: a
// pod held out of the scheduling queue is never tried, so none is written.
func (e *env) requireNoAttempt(ctx context.Context, t *testing.T, ns, name string) {
	t.Helper()
	p := e.get(ctx, t, ns, name)
	if p == nil {
		t.Fatalf("pod %s is gone", name)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			t.Fatalf("pod %s was tried while its gang was incomplete: %+v", name, c)
		}
	}
}

// eventually polls cond until it holds, failing with what it last said.
func eventually(ctx context.Context, t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	testutil.Eventually(ctx, t, 60*time.Second, what, func() (bool, string, error) {
		ok, msg := cond()
		return ok, msg, nil
	})
}
