package jobs

import (
	"maps"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestAddressWaitsHold: a replica whose Service publishes an address waits
// from the first reconcile that sees it (started once), is released when
// the address goes or after staleAddressWait, and a wait forgotten by its
// job is swept after addressWaitTTL.
func TestAddressWaitsHold(t *testing.T) {
	w := newAddressWaits()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	check := func(at time.Duration, published map[string]bool, wantHeld, wantStarted []string) {
		t.Helper()
		heldSet, started := w.hold("ns", published, t0.Add(at))
		held := slices.Sorted(maps.Keys(heldSet))
		slices.Sort(started)
		if !slices.Equal(held, wantHeld) || !slices.Equal(started, wantStarted) {
			t.Errorf("at %v, published %v: held %v started %v, want held %v started %v", at, published, held, started, wantHeld, wantStarted)
		}
	}
	check(0, map[string]bool{"j-master-0": true, "j-worker-0": false}, []string{"j-master-0"}, []string{"j-master-0"})
	check(10*time.Second, map[string]bool{"j-master-0": true}, []string{"j-master-0"}, nil)
	check(staleAddressWait, map[string]bool{"j-master-0": true}, nil, nil)
	// Released for good: a later wait starts afresh.
	check(staleAddressWait+time.Second, map[string]bool{"j-master-0": true}, []string{"j-master-0"}, []string{"j-master-0"})
	check(staleAddressWait+2*time.Second, map[string]bool{"j-master-0": false}, nil, nil)
	if len(w.since) != 0 {
		t.Errorf("waits left after every address went: %v", w.since)
	}

	w.hold("other", map[string]bool{"k-master-0": true}, t0)
	w.hold("ns", map[string]bool{"j-master-0": true}, t0.Add(addressWaitTTL+time.Second))
	if _, ok := w.since[types.NamespacedName{Namespace: "other", Name: "k-master-0"}]; ok {
		t.Errorf("a wait older than %v was kept: %v", addressWaitTTL, w.since)
	}
}
