package nvidia

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"k8s.io/klog/v2"
)

// DefaultIgnoredXIDs are XIDs caused by applications, not by the GPU
// (NVIDIA's list): 13 graphics engine exception, 31 GPU memory page fault,
// 43 GPU stopped processing, 45 preemptive cleanup, 68 video processor
// exception, 109 context switch timeout.
var DefaultIgnoredXIDs = []uint64{13, 31, 43, 45, 68, 109}

// healthPolicy says which XIDs make a device unhealthy.
type healthPolicy struct {
	disabled bool
	ignored  map[uint64]bool
}

// newHealthPolicy applies DP_DISABLE_HEALTHCHECKS (all, xids, or a list of
// XIDs to ignore as well) and DP_ENABLE_HEALTHCHECKS (all, or a list of
// XIDs to act on even if ignored; it wins).
func newHealthPolicy(disable, enable string) healthPolicy {
	p := healthPolicy{ignored: map[uint64]bool{}}
	for _, x := range DefaultIgnoredXIDs {
		p.ignored[x] = true
	}
	for _, f := range splitList(disable) {
		switch f {
		case "all", "xids":
			p.disabled = true
		default:
			if x, err := strconv.ParseUint(f, 10, 64); err == nil {
				p.ignored[x] = true
			}
		}
	}
	for _, f := range splitList(enable) {
		switch f {
		case "all", "xids":
			p.disabled = false
			p.ignored = map[uint64]bool{}
		default:
			if x, err := strconv.ParseUint(f, 10, 64); err == nil {
				delete(p.ignored, x)
			}
		}
	}
	return p
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ',' || r == ' ' }) {
		out = append(out, strings.TrimSpace(f))
	}
	return out
}

// critical reports whether an XID marks a device unhealthy.
func (p healthPolicy) critical(xid uint64) bool { return !p.disabled && !p.ignored[xid] }

// healthMonitor tracks device health from NVML XID events and heals
// devices that stay quiet for a period and pass an NVML check.
type healthMonitor struct {
	lib     nvml.Interface
	machine *Machine
	policy  healthPolicy
	quiet   time.Duration
	wait    time.Duration
	logger  klog.Logger

	mu        sync.Mutex
	lastEvent map[string]time.Time // unhealthy device UUID -> last event
	listeners []func()
	events    int // critical XIDs seen
	recovered int // devices made healthy again

	stop chan struct{}
	done chan struct{}
}

func newHealthMonitor(ctx context.Context, lib nvml.Interface, m *Machine, o Options) *healthMonitor {
	return &healthMonitor{
		lib: lib, machine: m,
		policy:    newHealthPolicy(o.DisableHealthChecks, o.EnableHealthChecks),
		quiet:     o.HealthQuietPeriod,
		wait:      o.HealthWait,
		logger:    klog.FromContext(ctx).WithName("health"),
		lastEvent: map[string]time.Time{},
	}
}

// healthy reports a device's health.
func (h *healthMonitor) healthy(uuid string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, bad := h.lastEvent[uuid]
	return !bad
}

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
	if h.policy.disabled {
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
	if ev.EventType != nvml.EventTypeXidCriticalError {
		return
	}
	xid := ev.EventData
	if !h.policy.critical(xid) {
		h.logger.V(2).Info("Ignoring XID", "xid", xid)
		return
	}
	uuid := ""
	if ev.Device != nil {
		uuid, _ = ev.Device.GetUUID()
	}
	for _, g := range h.machine.GPUs {
		if g.UUID != uuid && uuid != "" {
			continue
		}
		if g.MIGEnabled && ev.GpuInstanceId != allInstances {
			for _, d := range g.MIGDevices {
				if uint32(d.MIG.GPUInstance) == ev.GpuInstanceId &&
					(ev.ComputeInstanceId == allInstances || uint32(d.MIG.ComputeInstance) == ev.ComputeInstanceId) {
					h.markUnhealthy(d.UUID, xid, "XID event")
				}
			}
			continue
		}
		h.markGPU(g, xid, "XID event")
	}
}

func (h *healthMonitor) markGPU(g GPU, xid uint64, reason string) {
	h.markUnhealthy(g.UUID, xid, reason)
	for _, d := range g.MIGDevices {
		h.markUnhealthy(d.UUID, xid, reason)
	}
}

func (h *healthMonitor) markUnhealthy(uuid string, xid uint64, reason string) {
	h.mu.Lock()
	_, already := h.lastEvent[uuid]
	h.lastEvent[uuid] = time.Now()
	h.events++
	events := h.events
	h.mu.Unlock()
	h.logger.Info("Device unhealthy", "uuid", uuid, "xid", xid, "reason", reason, "criticalEvents", events)
	if !already {
		h.changed()
	}
}

// tryRecover heals devices that were quiet for the quiet period and pass
// an NVML check.
func (h *healthMonitor) tryRecover() {
	if h.quiet <= 0 {
		return
	}
	now := time.Now()
	h.mu.Lock()
	var due []string
	for uuid, t := range h.lastEvent {
		if now.Sub(t) >= h.quiet {
			due = append(due, uuid)
		}
	}
	h.mu.Unlock()
	healed := false
	for _, uuid := range due {
		if err := h.check(uuid); err != nil {
			h.logger.V(2).Info("Device still failing its check", "uuid", uuid, "err", err.Error())
			continue
		}
		h.mu.Lock()
		delete(h.lastEvent, uuid)
		h.recovered++
		n := h.recovered
		h.mu.Unlock()
		h.logger.Info("Device healthy again", "uuid", uuid, "quietPeriod", h.quiet, "recoveries", n)
		healed = true
	}
	if healed {
		h.changed()
	}
}

// check queries a device through NVML: its memory must be readable.
func (h *healthMonitor) check(uuid string) error {
	for _, g := range h.machine.GPUs {
		if g.UUID == uuid {
			return checkGPU(h.lib, uuid)
		}
		for _, d := range g.MIGDevices {
			if d.UUID == uuid {
				if err := checkGPU(h.lib, g.UUID); err != nil {
					return err
				}
				return checkMIG(h.lib, g.UUID, uuid)
			}
		}
	}
	return nil
}

func checkGPU(lib nvml.Interface, uuid string) error {
	d, ret := lib.DeviceGetHandleByUUID(uuid)
	if ret != nvml.SUCCESS {
		return nvmlError("opening "+uuid, ret)
	}
	if _, ret := d.GetMemoryInfo(); ret != nvml.SUCCESS {
		return nvmlError("reading memory of "+uuid, ret)
	}
	return nil
}

func checkMIG(lib nvml.Interface, parent, uuid string) error {
	p, ret := lib.DeviceGetHandleByUUID(parent)
	if ret != nvml.SUCCESS {
		return nvmlError("opening "+parent, ret)
	}
	max, ret := p.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return nvmlError("counting MIG devices of "+parent, ret)
	}
	for j := 0; j < max; j++ {
		m, ret := p.GetMigDeviceHandleByIndex(j)
		if ret != nvml.SUCCESS {
			continue
		}
		if u, _ := m.GetUUID(); u == uuid {
			if _, ret := m.GetMemoryInfo(); ret != nvml.SUCCESS {
				return nvmlError("reading memory of "+uuid, ret)
			}
			return nil
		}
	}
	return nvmlError("finding "+uuid, nvml.ERROR_NOT_FOUND)
}
