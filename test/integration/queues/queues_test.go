package queues

import "testing"

// TestQueues runs every case against one control plane, in parallel.
func TestQueues(t *testing.T) {
	e := startEnv(t)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"status/podgroup", testPodGroupStatus},
		{"status/queue", testQueueStatus},
		{"maxduration", testMaxDuration},
		{"admission/closed", testClosedQueue},
		{"admission/seedquota", testSeedQuota},
		{"admission/namespace", testNamespaceSelector},
		{"admission/shape", testShape},
		{"admission/job", testJobRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, e)
		})
	}
}
