package ascend

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// DefaultHealthPeriod is how often chip health is polled, as in MindX.
const DefaultHealthPeriod = 5 * time.Second

// ChipHealth is one chip's health as last polled.
type ChipHealth struct {
	// Healthy is false for major or critical faults and failed reads.
	Healthy bool
	// NetworkHealthy is false when the chip's RoCE link is down.
	NetworkHealthy bool
	// Health is the DCMI health code.
	Health uint32
	// ErrorCodes are the chip's error codes.
	ErrorCodes []uint32
}

// Usable reports whether the chip may be allocated.
func (h ChipHealth) Usable() bool { return h.Healthy && h.NetworkHealthy }

// faultEventer is a Lib that signals faults as they happen: the simulator,
// and DCMI through dcmi_subscribe_fault_event.
type faultEventer interface {
	FaultEvents() <-chan struct{}
}

// healthMonitor polls chip health and tells subscribers about changes. A
// chip that recovers becomes allocatable again without a restart.
type healthMonitor struct {
	lib    Lib
	chips  []Chip
	period time.Duration

	mu    sync.Mutex
	state map[int]ChipHealth // by physical ID
	subs  []func()

	cancel context.CancelFunc
	done   chan struct{}
}

func newHealthMonitor(lib Lib, chips []Chip, period time.Duration) *healthMonitor {
	if period <= 0 {
		period = DefaultHealthPeriod
	}
	return &healthMonitor{lib: lib, chips: chips, period: period, state: map[int]ChipHealth{}}
}

// read polls one chip.
func (h *healthMonitor) read(c Chip) ChipHealth {
	var out ChipHealth
	code, err := h.lib.Health(c.Card, c.Device)
	out.Health = code
	out.Healthy = err == nil && healthyCode(code)
	if codes, err := h.lib.ErrorCodes(c.Card, c.Device); err == nil {
		out.ErrorCodes = codes
	}
	out.NetworkHealthy = true
	if c.IP != "" {
		r, err := h.lib.NetworkHealth(c.Card, c.Device)
		out.NetworkHealthy = errors.Is(err, ErrNotSupported) || err == nil && networkHealthy(r)
	}
	return out
}

// check polls every chip and notifies subscribers when anything changed.
func (h *healthMonitor) check(logger klog.Logger) {
	changed := false
	for _, c := range h.chips {
		now := h.read(c)
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
func (h *healthMonitor) health(phy int) ChipHealth {
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
	if fe, ok := h.lib.(faultEventer); ok {
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
