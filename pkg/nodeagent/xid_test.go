package nodeagent

import (
	"context"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/nvidia"
)

// TestXIDEvents injects XIDs into the simulated machine: a critical one
// makes the GPU unhealthy and shows in DCGM_FI_DEV_XID_ERRORS; an
// application XID (13) is reported but leaves the device healthy.
func TestXIDEvents(t *testing.T) {
	testCases := []struct {
		name        string
		xid         uint64
		wantHealthy float64
	}{
		{name: "critical XID 79", xid: 79, wantHealthy: 0},
		{name: "application XID 13", xid: 13, wantHealthy: 1},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			src, sim := newSimSource(t, "dgxa100", "")
			c := NewCollector("n", []Source{src}, nil, nil)
			first := c.CollectOnce(context.Background()) // opens NVML and starts watching
			uuid := first.Devices[2].ID
			if err := sim.InjectXID(uuid, tc.xid); err != nil {
				t.Fatal(err)
			}
			// The event arrives asynchronously; collect until it shows.
			deadline := time.Now().Add(30 * time.Second)
			var xid []series
			for time.Now().Before(deadline) {
				c.CollectOnce(context.Background())
				xid = find(gather(t, c), "DCGM_FI_DEV_XID_ERRORS", map[string]string{"UUID": uuid})
				if len(xid) == 1 && xid[0].value == float64(tc.xid) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if len(xid) != 1 || xid[0].value != float64(tc.xid) {
				t.Fatalf("DCGM_FI_DEV_XID_ERRORS = %v, want %d", xid, tc.xid)
			}
			all := gather(t, c)
			if h := find(all, "accelstack_gpu_healthy", map[string]string{"UUID": uuid}); len(h) != 1 || h[0].value != tc.wantHealthy {
				t.Errorf("accelstack_gpu_healthy = %v, want %v", h, tc.wantHealthy)
			}
			other := find(all, "DCGM_FI_DEV_XID_ERRORS", map[string]string{"gpu": "0"})
			if len(other) != 1 || other[0].value != 0 {
				t.Errorf("XID on GPU 0 = %v, want 0", other)
			}
		})
	}
}

// TestXIDSeenOnDrain: an event that arrives during a collection shows in
// the XID readings only once a drain has handed it to the health state
// too, so that no scrape shows an XID on a device still read healthy.
func TestXIDSeenOnDrain(t *testing.T) {
	w := &xidWatcher{log: klog.Background(), last: map[xidKey]xidEvent{}, fresh: map[xidKey]xidEvent{}}
	ev := nvidia.XIDEvent{GPU: "GPU-1", GPUInstance: nvidia.AllInstances, ComputeInstance: nvidia.AllInstances, XID: 79, Time: time.Now()}
	w.record(ev)
	if got, ok := w.lastFor("GPU-1", -1); ok {
		t.Fatalf("XID %d readable before the drain that gives it to the health state", got.xid)
	}
	if drained := w.drain(); len(drained) != 1 || drained[0].XID != 79 {
		t.Fatalf("drained %v, want the XID 79", drained)
	}
	if got, ok := w.lastFor("GPU-1", -1); !ok || got.xid != 79 {
		t.Fatalf("lastFor after the drain = %v, %t; want XID 79", got, ok)
	}
	if drained := w.drain(); len(drained) != 0 {
		t.Errorf("a second drain returned %v", drained)
	}
	if got, ok := w.lastFor("GPU-1", -1); !ok || got.xid != 79 {
		t.Errorf("lastFor after a second drain = %v, %t; the last XID stays", got, ok)
	}
}
