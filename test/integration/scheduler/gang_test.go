package scheduler

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

// testGangAllOrNothing: three pods of a PodGroup of minMember 3 that only
// two fit stay wholly unbound, through a first attempt that reserved two
// and timed out and another gang timeout after it; once a second node
// joins the pool all three are bound.
func testGangAllOrNothing(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("gang")
	e.node(t, pool, 4, nil, nil)
	q := e.queue(t, pool, nil)
	ns := e.namespace(t, nil)
	pg := e.podGroup(t, ns, q, 3)
	names := []string{"w-0", "w-1", "w-2"}
	for _, n := range names {
		e.pod(t, ns, n, "2", groupLabels(pg, ""))
	}
	e.waitGangRejected(ctx, t, ns, names...)
	e.holdUnbound(ctx, t, gangTimeout, ns, names...)
	e.node(t, pool, 4, nil, nil)
	e.waitBound(ctx, t, ns, names...)
}

// testGangRoles: a group of minMember 2 with roles master:1 and worker:1
// does not start with two workers, which are not even tried (the PodGroup
// says what it lacks); the master's arrival starts all three.
func testGangRoles(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("roles")
	e.node(t, pool, 16, nil, nil)
	q := e.queue(t, pool, nil)
	ns := e.namespace(t, nil)
	pg := e.podGroup(t, ns, q, 2, schedv1beta1.Role{Name: "master", MinMember: 1}, schedv1beta1.Role{Name: "worker", MinMember: 1})
	e.pod(t, ns, "worker-0", "1", groupLabels(pg, "worker"))
	e.pod(t, ns, "worker-1", "1", groupLabels(pg, "worker"))
	e.waitGroupCondition(ctx, t, ns, pg, schedv1beta1.PodGroupSufficientMember, metav1.ConditionFalse,
		schedv1beta1.ReasonInsufficientMemberPods, `of role "master"`)
	e.holdUnbound(ctx, t, time.Second, ns, "worker-0", "worker-1")
	// A pod of the same queue created after the workers, which the queue
	// order puts behind them, is tried and bound: the scheduler has got
	// past the workers' place.
	e.pod(t, ns, "marker", "1", queueLabel(q))
	e.waitBound(ctx, t, ns, "marker")
	// The workers wait outside the scheduling queue: never tried, so the
	// scheduler wrote nothing to them while the master was missing.
	e.requireNoAttempt(ctx, t, ns, "worker-0")
	e.requireNoAttempt(ctx, t, ns, "worker-1")
	e.pod(t, ns, "master-0", "1", groupLabels(pg, "master"))
	e.waitBound(ctx, t, ns, "worker-0", "worker-1", "master-0")
}

// testGangTimeout: the reservations of a gang that cannot complete are
// released when its wait times out, so a pod of another queue that needs
// the room gets it.
func testGangTimeout(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("timeout")
	e.node(t, pool, 4, nil, nil)
	q := e.queue(t, pool, nil)
	ns := e.namespace(t, nil)
	pg := e.podGroup(t, ns, q, 2)
	// Each member fits alone, never both: one reserves, waits, and must let go.
	e.pod(t, ns, "big-0", "3", groupLabels(pg, ""))
	e.pod(t, ns, "big-1", "3", groupLabels(pg, ""))
	e.waitGangRejected(ctx, t, ns, "big-0", "big-1")
	e.holdUnbound(ctx, t, time.Second, ns, "big-0", "big-1")
	other := e.queue(t, pool, nil)
	e.pod(t, ns, "solo", "3", queueLabel(other))
	e.waitBound(ctx, t, ns, "solo")
	if b := e.bound(ctx, t, ns, "big-0", "big-1"); len(b) != 0 {
		t.Errorf("members of an incomplete gang bound: %v", b)
	}
}

// testGangOverQuota: a gang whose members together exceed its queue's
// quota, though each alone fits, is refused at PreFilter with the whole
// gang's requests, so none of its members is reserved: every member says
// so with nothing allocated, and none is bound.
func testGangOverQuota(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("gangquota")
	e.node(t, pool, 16, nil, nil)
	q := e.queue(t, pool, cpuQuota("4"))
	ns := e.namespace(t, nil)
	pg := e.podGroup(t, ns, q, 3)
	names := []string{"g-0", "g-1", "g-2"}
	for _, n := range names {
		e.pod(t, ns, n, "2", groupLabels(pg, ""))
	}
	// A member counted alone (2 of 4) would be admitted and reserved.
	for _, n := range names {
		e.waitUnschedulable(ctx, t, ns, n, `queue "`+q+`": cpu requests 6 would exceed its quota 4 (0 allocated)`)
	}
	e.holdUnbound(ctx, t, time.Second, ns, names...)
}

// testGangMemberRecreated: a member of a started gang that is deleted and
// created again (a restart) joins at once, the bound members counting for
// the gang: it does not wait at Permit for a gang timeout.
func testGangMemberRecreated(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("rejoin")
	e.node(t, pool, 8, nil, nil)
	q := e.queue(t, pool, nil)
	ns := e.namespace(t, nil)
	pg := e.podGroup(t, ns, q, 3)
	names := []string{"m-0", "m-1", "m-2"}
	for _, n := range names {
		e.pod(t, ns, n, "1", groupLabels(pg, ""))
	}
	e.waitBound(ctx, t, ns, names...)
	if err := e.c.Delete(ctx, e.get(ctx, t, ns, "m-1")); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "m-1 gone", func() (bool, string) { return e.get(ctx, t, ns, "m-1") == nil, "m-1 still exists" })
	start := time.Now()
	e.pod(t, ns, "m-1", "1", groupLabels(pg, ""))
	e.waitBound(ctx, t, ns, "m-1")
	if took := time.Since(start); took >= gangTimeout {
		t.Errorf("the recreated member was bound after %v, not before a gang timeout (%v)", took, gangTimeout)
	}
	e.mustStayBound(ctx, t, ns, names...)
}
