//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/test/cluster"
)

// pendingWindow is how long the gang that does not fit is watched for a
// pod bound to the node: several of the scheduler's retries and longer
// than a gang's wait for its missing members in Permit.
const pendingWindow = 30 * time.Second

// TestGangWaitsForCapacity runs the T9k Scheduler as deploy/ installs it.
// A blocker pod of another queue takes most of the node's free cpu, leaving
// room for one member of a gang of two but not for both: the gang stays
// wholly Pending (no member bound, though one would fit alone) and its
// PodGroup says GroupScheduled=False. Once the blocker is deleted both
// members are bound together and run; the PodGroup says GroupScheduled=True
// and the Queue counts the group, its running pods and their cpu.
//
// It is not parallel: it counts on the node's free cpu staying as measured.
func TestGangWaitsForCapacity(t *testing.T) {
	c := crClient(t)
	gangQueue, blockerQueue := "e2e-gang", "e2e-blocker"
	// Registered before the namespace, so they run after it is gone.
	t.Cleanup(func() {
		for _, name := range []string{gangQueue, blockerQueue} {
			q := &schedv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}
			if err := c.Delete(context.Background(), q); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting Queue %s: %v", name, err)
			}
		}
	})
	ns := newNamespace(t)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := clus.Kubectl(context.Background(), "-n", cluster.Namespace, "logs", "deploy/t9k-scheduler", "--tail=60")
			t.Logf("t9k-scheduler's log:\n%s", logs)
			out, _ := clus.Kubectl(context.Background(), "get", "queues", "-o", "wide")
			t.Logf("queues:\n%s", out)
			out, _ = clus.Kubectl(context.Background(), "-n", ns, "get", "podgroups", "-o", "yaml")
			t.Logf("podgroups:\n%s", out)
		}
	})
	ctx := testContext(t)

	// Equal priorities, and the blocker's queue not preemptible: the gang
	// may not make room by evicting the blocker, only wait for it to go.
	for _, q := range []*schedv1beta1.Queue{
		{ObjectMeta: metav1.ObjectMeta{Name: gangQueue}, Spec: schedv1beta1.QueueSpec{
			Priority: 10, NamespaceSelector: &metav1.LabelSelector{},
		}},
		{ObjectMeta: metav1.ObjectMeta{Name: blockerQueue}, Spec: schedv1beta1.QueueSpec{
			Priority: 10, Preemptible: ptr.To(false), NamespaceSelector: &metav1.LabelSelector{},
		}},
	} {
		if err := c.Create(ctx, q); err != nil {
			t.Fatalf("creating Queue %s: %v", q.Name, err)
		}
	}
	// Ready=True comes from the queue controllers, whose cache the
	// admission webhook reads: from then on the webhook knows the queue.
	for _, name := range []string{gangQueue, blockerQueue} {
		waitQueue(t, c, name, "Ready", func(q *schedv1beta1.Queue) bool {
			return meta.IsStatusConditionTrue(q.Status.Conditions, "Ready")
		})
	}

	free := freeCPU(t)
	// Each member asks a quarter of the free cpu; the blocker leaves one
	// and a half members' worth.
	member := free / 4
	blocker := free - member - member/2
	if member < 50 {
		t.Fatalf("only %dm cpu free on the node: too little for the test", free)
	}
	t.Logf("node: %dm cpu free; blocker %dm, leaving %dm; gang of 2 x %dm", free, blocker, free-blocker, member)

	blockerPod := cpuPod("blocker", blocker)
	blockerPod.Labels = map[string]string{schedv1beta1.QueueLabel: blockerQueue}
	createPod(t, ns, blockerPod)
	waitPod(t, ns, "blocker", "Running", running)

	pg := &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "gang", Namespace: ns},
		Spec:       schedv1beta1.PodGroupSpec{MinMember: 2, Queue: gangQueue},
	}
	if err := c.Create(ctx, pg); err != nil {
		t.Fatal(err)
	}
	members := []string{"gang-0", "gang-1"}
	for _, name := range members {
		p := cpuPod(name, member)
		p.Labels = map[string]string{schedv1beta1.GroupNameLabel: "gang"}
		createPod(t, ns, p)
	}

	// Wholly Pending: no member bound for the whole window, though one
	// alone would fit; the scheduler has looked at them (PodScheduled=False)
	// and the PodGroup is not scheduled.
	seen := map[string]string{}
	deadline := time.Now().Add(pendingWindow)
	for time.Now().Before(deadline) {
		for _, name := range members {
			p, err := kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
				t.Fatalf("%s of a gang that does not fit was bound to %q (phase %s) while the blocker runs", name, p.Spec.NodeName, p.Status.Phase)
			}
			if sc := podCondition(p, corev1.PodScheduled); sc != nil && sc.Status == corev1.ConditionFalse {
				seen[name] = sc.Reason + ": " + sc.Message
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	if len(seen) == 0 {
		t.Errorf("the scheduler marked no member of the gang unschedulable within %s", pendingWindow)
	}
	for name, why := range seen {
		t.Logf("%s pending: %s", name, why)
	}
	pending := waitPodGroup(t, c, ns, "gang", "GroupScheduled=False", func(pg *schedv1beta1.PodGroup) bool {
		cond := podGroupCondition(pg, schedv1beta1.PodGroupScheduled)
		return cond != nil && cond.Status == metav1.ConditionFalse && pg.Status.Pending == 2
	})
	cond := podGroupCondition(pending, schedv1beta1.PodGroupScheduled)
	if cond.Reason != schedv1beta1.ReasonPodGroupPending {
		t.Errorf("GroupScheduled=False has reason %q, want %q", cond.Reason, schedv1beta1.ReasonPodGroupPending)
	}
	t.Logf("while blocked: GroupScheduled=False %s: %s", cond.Reason, cond.Message)

	// Free the capacity: the whole gang is bound and runs.
	if err := kube.CoreV1().Pods(ns).Delete(ctx, "blocker", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	for _, name := range members {
		waitPod(t, ns, name, "Running", running)
	}
	t.Logf("the gang runs %s after the blocker's deletion", time.Since(freed).Round(100*time.Millisecond))

	want := resource.NewMilliQuantity(2*member, resource.DecimalSI)
	scheduled := waitPodGroup(t, c, ns, "gang", "GroupScheduled=True with 2 running", func(pg *schedv1beta1.PodGroup) bool {
		cond := podGroupCondition(pg, schedv1beta1.PodGroupScheduled)
		return cond != nil && cond.Status == metav1.ConditionTrue && pg.Status.Running == 2
	})
	cond = podGroupCondition(scheduled, schedv1beta1.PodGroupScheduled)
	if cond.Reason != schedv1beta1.ReasonPodGroupScheduled {
		t.Errorf("GroupScheduled=True has reason %q, want %q", cond.Reason, schedv1beta1.ReasonPodGroupScheduled)
	}
	if sm := podGroupCondition(scheduled, schedv1beta1.PodGroupSufficientMember); sm == nil || sm.Status != metav1.ConditionTrue {
		t.Errorf("SufficientGroupMember: %+v, want True", sm)
	}
	if got := scheduled.Status.Allocated[corev1.ResourceCPU]; got.Cmp(*want) != 0 {
		t.Errorf("the PodGroup's allocated cpu is %s, want %s", got.String(), want.String())
	}

	q := waitQueue(t, c, gangQueue, "counting the running gang", func(q *schedv1beta1.Queue) bool {
		return q.Status.Pods.Running == 2 && q.Status.PodGroups.Total == 1
	})
	if got := q.Status.Allocated[corev1.ResourceCPU]; got.Cmp(*want) != 0 {
		t.Errorf("Queue %s has allocated cpu %s, want %s", gangQueue, got.String(), want.String())
	}
	if q.Status.Pods.Pending != 0 {
		t.Errorf("Queue %s counts %d pending pods, want 0", gangQueue, q.Status.Pods.Pending)
	}
	out, _ := clus.Kubectl(ctx, "get", "queue", gangQueue)
	t.Logf("kubectl get queue:\n%s", out)
	out, _ = clus.Kubectl(ctx, "-n", ns, "get", "podgroup", "gang")
	t.Logf("kubectl get podgroup:\n%s", out)
}

// cpuPod is a busybox pod of the T9k Scheduler that sleeps, asking milli
// cpu.
func cpuPod(name string, milli int64) *corev1.Pod {
	p := shellPod(name, "sleep 3600", nil)
	p.Spec.SchedulerName = schedv1beta1.SchedulerName
	p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(milli, resource.DecimalSI)},
	}
	return p
}

// freeCPU returns the node's allocatable cpu less the requests of the pods
// that hold it (not finished, not being deleted), in millicores.
func freeCPU(t *testing.T) int64 {
	t.Helper()
	ctx := testContext(t)
	n, err := kube.CoreV1().Nodes().Get(ctx, cluster.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	alloc := n.Status.Allocatable[corev1.ResourceCPU]
	pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + cluster.NodeName})
	if err != nil {
		t.Fatal(err)
	}
	used := int64(0)
	for i := range pods.Items {
		p := &pods.Items[i]
		// A pod being deleted is left out: were it counted and then gone
		// during the test, the gang would find more room than measured.
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
			continue
		}
		req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		cpu := req[corev1.ResourceCPU]
		used += cpu.MilliValue()
	}
	return alloc.MilliValue() - used
}

// waitQueue polls Queue name until done says it is where the test wants it.
func waitQueue(t *testing.T, c client.Client, name, what string, done func(*schedv1beta1.Queue) bool) *schedv1beta1.Queue {
	t.Helper()
	q := &schedv1beta1.Queue{}
	var lastErr error
	err := wait.PollUntilContextCancel(testContext(t), 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if lastErr = c.Get(ctx, client.ObjectKey{Name: name}, q); lastErr != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		return done(q), nil
	})
	if err != nil {
		t.Fatalf("Queue %s never %s: %v (last error %v); status: %s", name, what, err, lastErr, statusJSON("queue", "", name))
	}
	return q
}

// waitPodGroup polls PodGroup ns/name until done says it is where the test
// wants it.
func waitPodGroup(t *testing.T, c client.Client, ns, name, what string, done func(*schedv1beta1.PodGroup) bool) *schedv1beta1.PodGroup {
	t.Helper()
	pg := &schedv1beta1.PodGroup{}
	var lastErr error
	err := wait.PollUntilContextCancel(testContext(t), 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if lastErr = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pg); lastErr != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		return done(pg), nil
	})
	if err != nil {
		t.Fatalf("PodGroup %s/%s never %s: %v (last error %v); status: %s", ns, name, what, err, lastErr, statusJSON("podgroup", ns, name))
	}
	return pg
}

// statusJSON returns the status of an object as kubectl prints it, for a
// failure.
func statusJSON(kind, ns, name string) string {
	args := []string{"get", kind, name, "-o", "jsonpath={.status}"}
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	out, err := clus.Kubectl(context.Background(), args...)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	return strings.TrimSpace(out)
}

// podGroupCondition returns the condition typ of pg, nil when absent.
func podGroupCondition(pg *schedv1beta1.PodGroup, typ string) *schedv1beta1.PodGroupCondition {
	for i := range pg.Status.Conditions {
		if pg.Status.Conditions[i].Type == typ {
			return &pg.Status.Conditions[i]
		}
	}
	return nil
}

// podCondition returns the condition typ of p, nil when absent.
func podCondition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}
