package queues

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/queues"
	"github.com/accelstack/accelstack/test/testutil"
)

// groupCond returns condition typ of pg.
func groupCond(pg *schedv1beta1.PodGroup, typ string) schedv1beta1.PodGroupCondition {
	for _, c := range pg.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return schedv1beta1.PodGroupCondition{}
}

// testPodGroupStatus: a PodGroup's conditions follow its pods, per role,
// and its counts and allocation follow their phases and bindings.
func testPodGroupStatus(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	q := e.queue(ctx, t, "pg", nil)
	pg := &schedv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gang"}, Spec: schedv1beta1.PodGroupSpec{
		MinMember: 3, Queue: q.Name,
		Roles: []schedv1beta1.Role{{Name: "master", MinMember: 1}, {Name: "worker", MinMember: 2}},
	}}
	if err := e.c.Create(ctx, pg); err != nil {
		t.Fatal(err)
	}
	member := func(n, role string) *corev1.Pod {
		return e.createPod(ctx, t, podSpec(ns, n, "2", map[string]string{schedv1beta1.GroupNameLabel: "gang", schedv1beta1.RoleLabel: role}))
	}
	wait := func(what string, ok func() bool) {
		t.Helper()
		testutil.Poll(ctx, t, what, func() (bool, string, error) {
			if err := e.c.Get(ctx, client.ObjectKeyFromObject(pg), pg); err != nil {
				return false, "", err
			}
			return ok(), fmt.Sprintf("status %+v", pg.Status), nil
		})
	}

	master := member("master-0", "master")
	w0 := member("worker-0", "worker")
	member("master-1", "master")
	wait("a worker short", func() bool {
		c := groupCond(pg, schedv1beta1.PodGroupSufficientMember)
		return c.Status == metav1.ConditionFalse && c.Reason == "InsufficientMemberPods" &&
			c.Message == `The PodGroup has 1 of minMember 2 pods of role "worker"` && pg.Status.Pending == 3
	})
	if c := groupCond(pg, schedv1beta1.PodGroupScheduled); c.Status != metav1.ConditionFalse || c.Reason != "PodGroupPending" {
		t.Errorf("GroupScheduled %+v, want False PodGroupPending", c)
	}

	w1 := member("worker-1", "worker")
	wait("sufficient", func() bool {
		c := groupCond(pg, schedv1beta1.PodGroupSufficientMember)
		return c.Status == metav1.ConditionTrue && c.Reason == "SufficientMemberPods"
	})

	for _, p := range []*corev1.Pod{master, w0, w1} {
		e.bind(ctx, t, p, "node-1")
	}
	e.setPhase(ctx, t, master, corev1.PodRunning)
	e.setPhase(ctx, t, w0, corev1.PodRunning)
	wait("scheduled", func() bool {
		c := groupCond(pg, schedv1beta1.PodGroupScheduled)
		return c.Status == metav1.ConditionTrue && c.Reason == "PodGroupScheduled" && c.Message == "Resources have been allocated to PodGroup" &&
			pg.Status.Running == 2 && pg.Status.Pending == 2 && cpuOf(pg.Status.Allocated) == "6"
	})

	// A finished worker leaves the role short but the group scheduled.
	e.setPhase(ctx, t, w1, corev1.PodSucceeded)
	wait("a worker finished", func() bool {
		return groupCond(pg, schedv1beta1.PodGroupSufficientMember).Status == metav1.ConditionFalse &&
			groupCond(pg, schedv1beta1.PodGroupScheduled).Status == metav1.ConditionTrue &&
			pg.Status.Succeeded == 1 && cpuOf(pg.Status.Allocated) == "4"
	})
}

// testQueueStatus: a Queue counts the pods labelled with it and those of
// its PodGroups, sums what the bound ones hold, and says it is open and
// ready until it is closed.
func testQueueStatus(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	q := e.queue(ctx, t, "status", nil)
	for _, n := range []string{"a", "b"} {
		pg := &schedv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}, Spec: schedv1beta1.PodGroupSpec{Queue: q.Name}}
		if err := e.c.Create(ctx, pg); err != nil {
			t.Fatal(err)
		}
	}
	// The webhook finds the pods' groups in the controllers' cache.
	testutil.Poll(ctx, t, "the PodGroups counted", func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKeyFromObject(q), q)
		return err == nil && q.Status.PodGroups.Total == 2, fmt.Sprintf("status %+v", q.Status), err
	})
	direct := e.createPod(ctx, t, podSpec(ns, "direct", "4", map[string]string{schedv1beta1.QueueLabel: q.Name}))
	grouped := e.createPod(ctx, t, podSpec(ns, "grouped", "2", map[string]string{schedv1beta1.GroupNameLabel: "a"}))
	done := e.createPod(ctx, t, podSpec(ns, "done", "8", map[string]string{schedv1beta1.GroupNameLabel: "b"}))
	e.createPod(ctx, t, podSpec(ns, "waiting", "16", map[string]string{schedv1beta1.QueueLabel: q.Name}))
	// The group's queue wins over the label.
	e.createPod(ctx, t, podSpec(ns, "elsewhere", "1", map[string]string{schedv1beta1.QueueLabel: "other", schedv1beta1.GroupNameLabel: "a"}))
	for _, p := range []*corev1.Pod{direct, grouped, done} {
		e.bind(ctx, t, p, "node-1")
	}
	e.setPhase(ctx, t, direct, corev1.PodRunning)
	e.setPhase(ctx, t, done, corev1.PodFailed)

	wait := func(what string, ok func() bool) {
		t.Helper()
		testutil.Poll(ctx, t, what, func() (bool, string, error) {
			if err := e.c.Get(ctx, client.ObjectKeyFromObject(q), q); err != nil {
				return false, "", err
			}
			return ok(), fmt.Sprintf("status %+v", q.Status), nil
		})
	}
	wait("queue status", func() bool {
		return cpuOf(q.Status.Allocated) == "6" && q.Status.PodGroups.Total == 2 &&
			q.Status.Pods == schedv1beta1.PodCounts{Running: 1, Pending: 3, Failed: 1} &&
			meta.IsStatusConditionTrue(q.Status.Conditions, queues.QueueOpen) &&
			meta.IsStatusConditionTrue(q.Status.Conditions, queues.QueueReady)
	})

	q.Spec.Closed = true
	if err := e.c.Update(ctx, q); err != nil {
		t.Fatal(err)
	}
	wait("closed", func() bool {
		c := meta.FindStatusCondition(q.Status.Conditions, queues.QueueOpen)
		r := meta.FindStatusCondition(q.Status.Conditions, queues.QueueReady)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "Closed" && r != nil && r.Status == metav1.ConditionFalse
	})
}
