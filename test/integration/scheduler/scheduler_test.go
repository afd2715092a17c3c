package scheduler

import "testing"

// TestScheduler runs every case against one control plane and scheduler, in
// parallel: each case has its own nodes and queues.
func TestScheduler(t *testing.T) {
	e := startEnv(t)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"gang/allornothing", testGangAllOrNothing},
		{"gang/roles", testGangRoles},
		{"gang/timeout", testGangTimeout},
		{"queue/quota", testQuota},
		{"queue/extendedquota", testExtendedQuota},
		{"queue/closed", testClosed},
		{"queue/missing", testMissingQueue},
		{"queue/namespaceselector", testNamespaceSelector},
		{"queue/nodeselector", testNodeSelector},
		{"queue/shapes", testShapes},
		{"preemption/workedexample", testWorkedExample},
		{"preemption/nonpreemptible", testNonPreemptible},
		{"preemption/wholegroup", testPreemptWholeGroup},
		{"queuesort/fairshare", testFairShare},
		{"jobs/pytorchgang", testPyTorchGang},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, e)
		})
	}
}
