package plugin

import (
	"context"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/nvidia"
)

// healthMonitor tracks device health from NVML XID events and heals
// devices that stay quiet for a period and pass an NVML check.
type healthMonitor struct {
	lib     nvml.Interface
	machine *nvidia.Machine
	state   *nvidia.HealthState
	wait    time.Duration
	logger  klog.Logger

	mu        sync.Mutex
	listeners []func()
	events    int // critical XIDs seen
	recovered int // devices made healthy again

	stop chan struct{}
	done chan struct{}
}

func newHealthMonitor(ctx context.Context, lib nvml.Interface, m *nvidia.Machine, o Options) *healthMonitor {
	return &healthMonitor{
		lib: lib, machine: m,
		state:  nvidia.NewHealthState(o.Policy()),
		wait:   o.HealthWait,
		logger: klog.FromContext(ctx).WithName("health"),
	}
}

// healthy reports a device's health.
func (h *healthMonitor) healthy(uuid string) bool { return h.state.Healthy(uuid) }

// counts returns the number of critical events and recoveries so far.
func (h *healthMonitor) counts() (events, recovered int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.events, h.recovered
}

// subscribe adds a function called after every health change.
func (h *healthMonitor) subscribe(f func()) {
	h.mu.Lock()
	h.listeners = append(h.listeners, f)
	h.mu.Unlock()
}

func (h *healthMonitor) changed() {
	h.mu.Lock()
	ls := append([]func(){}, h.listeners...)
	h.mu.Unlock()
	for _, f := range ls {
		f()
	}
}

// start registers for XID events and watches them until stopAndWait.
func (h *healthMonitor) start() {
	h.stop, h.done = make(chan struct{}), make(chan struct{})
	if h.state.Policy().Disabled {
		h.logger.Info("Health checks disabled by DP_DISABLE_HEALTHCHECKS")
		close(h.done)
		return
	}
	es, ret := h.lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		h.logger.Error(ret, "Creating NVML event set; health checks off")
		close(h.done)
		return
	}
	for _, g := range h.machine.GPUs {
		d, ret := h.lib.DeviceGetHandleByUUID(g.UUID)
		if ret != nvml.SUCCESS {
			h.markUnhealthy(g.UUID, 0, "cannot open device for health checks")
			continue
		}
		supported, ret := d.GetSupportedEventTypes()
		if ret != nvml.SUCCESS || supported&nvml.EventTypeXidCriticalError == 0 {
			h.logger.Info("Device does not report XID events; not health checked", "uuid", g.UUID)
			continue
		}
		if ret := d.RegisterEvents(nvml.EventTypeXidCriticalError, es); ret != nvml.SUCCESS {
			h.logger.Error(ret, "Registering for XID events", "uuid", g.UUID)
		}
	}
	go h.loop(es)
}

func (h *healthMonitor) stopAndWait() {
	if h.stop == nil {
		return
	}
	close(h.stop)
	<-h.done
	h.stop = nil
}

func (h *healthMonitor) loop(es nvml.EventSet) {
	defer close(h.done)
	defer es.Free()
	for {
		select {
		case <-h.stop:
			return
		default:
		}
		ev, ret := es.Wait(uint32(h.wait / time.Millisecond))
		switch {
		case ret == nvml.SUCCESS:
			h.handle(ev)
		case ret == nvml.ERROR_TIMEOUT:
		default:
			select {
			case <-h.stop:
				return
			default:
			}
			h.logger.Error(ret, "Waiting for NVML events failed; marking all devices unhealthy")
			for _, g := range h.machine.GPUs {
				h.markGPU(g, 0, "NVML event wait failed")
			}
			time.Sleep(h.wait)
		}
		h.tryRecover()
	}
}

func (h *healthMonitor) handle(ev nvml.EventData) {
	x, ok := nvidia.XIDEventFromNVML(ev, time.Now())
	if !ok {
		return
	}
	if !h.state.Policy().Critical(x.XID) {
		h.logger.V(2).Info("Ignoring XID", "xid", x.XID)
		return
	}
	for _, uuid := range nvidia.AffectedDevices(h.machine, x) {
		h.markUnhealthy(uuid, x.XID, "XID event")
	}
}

func (h *healthMonitor) markGPU(g nvidia.GPU, xid uint64, reason string) {
	h.markUnhealthy(g.UUID, xid, reason)
	for _, d := range g.MIGDevices {
		h.markUnhealthy(d.UUID, xid, reason)
	}
}

func (h *healthMonitor) markUnhealthy(uuid string, xid uint64, reason string) {
	newly := h.state.MarkUnhealthy(uuid, time.Now())
	h.mu.Lock()
	h.events++
	events := h.events
	h.mu.Unlock()
	h.logger.Info("Device unhealthy", "uuid", uuid, "xid", xid, "reason", reason, "criticalEvents", events)
	if newly {
		h.changed()
	}
}

// tryRecover heals devices that were quiet for the quiet period and pass
// an NVML check.
func (h *healthMonitor) tryRecover() {
	healed := h.state.Recover(time.Now(), func(uuid string) error {
		err := nvidia.CheckDevice(h.lib, h.machine, uuid)
		if err != nil {
			h.logger.V(2).Info("Device still failing its check", "uuid", uuid, "err", err.Error())
		}
		return err
	})
	if len(healed) == 0 {
		return
	}
	h.mu.Lock()
	h.recovered += len(healed)
	n := h.recovered
	h.mu.Unlock()
	for _, uuid := range healed {
		h.logger.Info("Device healthy again", "uuid", uuid, "quietPeriod", h.state.Policy().QuietPeriod, "recoveries", n)
	}
	h.changed()
}
