package scheduler

import "testing"

// TestScheduler runs every case against one control plane and scheduler:
// in parallel, each case with its own nodes and queues, then the fair
// share case alone. Fair share orders the pods the scheduler tries
// together; a pod still in its scheduling backoff is not among them, and
// the parallel cases' events keep sending pods back there, so that case
// waits in a quiet scheduler until its pods are out of backoff.
func TestScheduler(t *testing.T) {
	e := startEnv(t)
	t.Run("parallel", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			fn   func(*testing.T, *env)
		}{
			{"gang/allornothing", testGangAllOrNothing},
			{"gang/roles", testGangRoles},
			{"gang/timeout", testGangTimeout},
			{"gang/overquota", testGangOverQuota},
			{"gang/memberrecreated", testGangMemberRecreated},
			{"queue/quota", testQuota},
			{"queue/extendedquota", testExtendedQuota},
			{"queue/closed", testClosed},
			{"queue/missing", testMissingQueue},
			{"queue/namespaceselector", testNamespaceSelector},
			{"queue/grant", testGrantedPod},
			{"queue/nodeselector", testNodeSelector},
			{"queue/shapes", testShapes},
			{"preemption/workedexample", testWorkedExample},
			{"preemption/nonpreemptible", testNonPreemptible},
			{"preemption/wholegroup", testPreemptWholeGroup},
			{"preemption/noqueue", testNoQueueUntouched},
			{"jobs/pytorchgang", testPyTorchGang},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				tc.fn(t, e)
			})
		}
	})
	t.Run("queuesort/fairshare", func(t *testing.T) { testFairShare(t, e) })
}
