package plugin

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/ascend"
)

// DefaultHealthPeriod is how often chip health is polled, as in MindX.
const DefaultHealthPeriod = 5 * time.Second

// healthMonitor polls chip health and tells subscribers about changes. A
// chip that recovers becomes allocatable again without a restart.
type healthMonitor struct {
	lib    ascend.Lib
	chips  []ascend.Chip
	period time.Duration

	mu    sync.Mutex
	state map[int]ascend.ChipHealth // by physical ID
	subs  []func()

	cancel context.CancelFunc
	done   chan struct{}
}

func newHealthMonitor(lib ascend.Lib, chips []ascend.Chip, period time.Duration) *healthMonitor {
	if period <= 0 {
		period = DefaultHealthPeriod
	}
	return &healthMonitor{lib: lib, chips: chips, period: period, state: map[int]ascend.ChipHealth{}}
}

// check polls every chip and notifies subscribers when anything changed.
func (h *healthMonitor) check(logger klog.Logger) {
	changed := false
	for _, c := range h.chips {
		now := ascend.ReadHealth(h.lib, c)
		h.mu.Lock()
		old, seen := h.state[c.PhyID]
		h.state[c.PhyID] = now
		h.mu.Unlock()
		if seen && old.Usable() == now.Usable() && old.Health == now.Health && slices.Equal(old.ErrorCodes, now.ErrorCodes) {
			continue
		}
		changed = true
		if seen || !now.Usable() {
			logger.Info("NPU health changed", "device", c.ID(), "healthy", now.Healthy,
				"networkHealthy", now.NetworkHealthy, "health", now.Health, "errorCodes", now.ErrorCodes)
		}
	}
	if !changed {
		return
	}
	h.mu.Lock()
	subs := slices.Clone(h.subs)
	h.mu.Unlock()
	for _, f := range subs {
		f()
	}
}

// subscribe registers f to be called after each change; f must not block.
func (h *healthMonitor) subscribe(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs = append(h.subs, f)
}

// health returns a chip's last polled health; unknown chips are unhealthy.
func (h *healthMonitor) health(phy int) ascend.ChipHealth {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state[phy]
}

// start polls once synchronously, so chips unhealthy at startup are never
// advertised as healthy, then polls every period and on fault events.
func (h *healthMonitor) start(ctx context.Context) {
	logger := klog.FromContext(ctx)
	h.check(logger)
	ctx, h.cancel = context.WithCancel(ctx)
	h.done = make(chan struct{})
	var events <-chan struct{}
	if fe, ok := h.lib.(ascend.FaultEventer); ok {
		events = fe.FaultEvents()
	}
	go func() {
		defer close(h.done)
		t := time.NewTicker(h.period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-events:
			}
			h.check(logger)
		}
	}()
}

func (h *healthMonitor) stopAndWait() {
	if h.cancel != nil {
		h.cancel()
		<-h.done
	}
}
