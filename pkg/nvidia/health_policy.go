package nvidia

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// DefaultIgnoredXIDs are XIDs caused by applications, not by the GPU
// (NVIDIA's list): 13 graphics engine exception, 31 GPU memory page fault,
// 43 GPU stopped processing, 45 preemptive cleanup, 68 video processor
// exception, 109 context switch timeout.
var DefaultIgnoredXIDs = []uint64{13, 31, 43, 45, 68, 109}

// Environment variables of NVIDIA's device plugin that set the policy.
const (
	EnvDisableHealthChecks = "DP_DISABLE_HEALTHCHECKS"
	EnvEnableHealthChecks  = "DP_ENABLE_HEALTHCHECKS"
)

// HealthPolicy is the health rule the device plugin and the node agent
// share: which XIDs make a device unhealthy, and how long a device must
// stay free of them before a passing NVML check makes it healthy again.
type HealthPolicy struct {
	// Disabled turns XID health checks off.
	Disabled bool
	// Ignored are the XIDs that do not make a device unhealthy.
	Ignored map[uint64]bool
	// QuietPeriod is how long an unhealthy device must go without a
	// critical XID before a passing check heals it; 0 never heals.
	QuietPeriod time.Duration
}

// NewHealthPolicy applies the values of DP_DISABLE_HEALTHCHECKS (all,
// xids, or a list of XIDs to ignore as well as DefaultIgnoredXIDs) and
// DP_ENABLE_HEALTHCHECKS (all, or a list of XIDs to act on even if
// ignored; it wins) with the given quiet period.
func NewHealthPolicy(disable, enable string, quiet time.Duration) HealthPolicy {
	p := HealthPolicy{Ignored: map[uint64]bool{}, QuietPeriod: quiet}
	for _, x := range DefaultIgnoredXIDs {
		p.Ignored[x] = true
	}
	for _, f := range splitList(disable) {
		switch f {
		case "all", "xids":
			p.Disabled = true
		default:
			if x, err := strconv.ParseUint(f, 10, 64); err == nil {
				p.Ignored[x] = true
			}
		}
	}
	for _, f := range splitList(enable) {
		switch f {
		case "all", "xids":
			p.Disabled = false
			p.Ignored = map[uint64]bool{}
		default:
			if x, err := strconv.ParseUint(f, 10, 64); err == nil {
				delete(p.Ignored, x)
			}
		}
	}
	return p
}

// HealthPolicyFromEnv is NewHealthPolicy with DP_DISABLE_HEALTHCHECKS and
// DP_ENABLE_HEALTHCHECKS read from the environment.
func HealthPolicyFromEnv(quiet time.Duration) HealthPolicy {
	return NewHealthPolicy(os.Getenv(EnvDisableHealthChecks), os.Getenv(EnvEnableHealthChecks), quiet)
}

// Policy returns the health policy of the options.
func (o Options) Policy() HealthPolicy {
	return NewHealthPolicy(o.DisableHealthChecks, o.EnableHealthChecks, o.HealthQuietPeriod)
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ',' || r == ' ' }) {
		out = append(out, strings.TrimSpace(f))
	}
	return out
}

// Critical reports whether an XID marks a device unhealthy.
func (p HealthPolicy) Critical(xid uint64) bool { return !p.Disabled && !p.Ignored[xid] }

// AllInstances is NVML's "no GPU or compute instance" value in event data.
const AllInstances = 0xFFFFFFFF

// XIDEvent is one XID error and where it happened.
type XIDEvent struct {
	// GPU is the UUID of the GPU; empty when NVML did not say.
	GPU string
	// GPUInstance and ComputeInstance name a MIG device on the GPU, or
	// are AllInstances.
	GPUInstance, ComputeInstance uint32
	// XID is the error number.
	XID uint64
	// Time is when the event was seen.
	Time time.Time
}

// XIDEventFromNVML converts an NVML event seen at t; false when it is not
// an XID event.
func XIDEventFromNVML(ev nvml.EventData, t time.Time) (XIDEvent, bool) {
	if ev.EventType != nvml.EventTypeXidCriticalError {
		return XIDEvent{}, false
	}
	x := XIDEvent{GPUInstance: ev.GpuInstanceId, ComputeInstance: ev.ComputeInstanceId, XID: ev.EventData, Time: t}
	if ev.Device != nil {
		x.GPU, _ = ev.Device.GetUUID()
	}
	return x, true
}

// AffectedDevices returns the UUIDs of the GPUs and MIG devices of m an
// event concerns: for an event naming a GPU instance on a MIG-enabled GPU,
// the matching MIG devices; otherwise the GPU and all its MIG devices
// (every GPU when the event names none).
func AffectedDevices(m *Machine, ev XIDEvent) []string {
	var out []string
	for _, g := range m.GPUs {
		if ev.GPU != "" && g.UUID != ev.GPU {
			continue
		}
		if g.MIGEnabled && ev.GPUInstance != AllInstances {
			for _, d := range g.MIGDevices {
				if uint32(d.MIG.GPUInstance) == ev.GPUInstance &&
					(ev.ComputeInstance == AllInstances || uint32(d.MIG.ComputeInstance) == ev.ComputeInstance) {
					out = append(out, d.UUID)
				}
			}
			continue
		}
		out = append(out, g.UUID)
		for _, d := range g.MIGDevices {
			out = append(out, d.UUID)
		}
	}
	return out
}

// HealthState applies a HealthPolicy to a machine's devices: critical
// XIDs make devices unhealthy, Recover makes quiet ones healthy again. It
// is safe for concurrent use.
type HealthState struct {
	policy HealthPolicy

	mu        sync.Mutex
	lastEvent map[string]time.Time // unhealthy device UUID -> last critical event
}

// NewHealthState returns a state with every device healthy.
func NewHealthState(p HealthPolicy) *HealthState {
	return &HealthState{policy: p, lastEvent: map[string]time.Time{}}
}

// Policy returns the state's policy.
func (h *HealthState) Policy() HealthPolicy { return h.policy }

// Record applies an XID event on m. It returns the devices the event made
// unhealthy (including ones already unhealthy, whose quiet period starts
// again) and false for an XID the policy does not act on.
func (h *HealthState) Record(m *Machine, ev XIDEvent) ([]string, bool) {
	if !h.policy.Critical(ev.XID) {
		return nil, false
	}
	uuids := AffectedDevices(m, ev)
	for _, u := range uuids {
		h.MarkUnhealthy(u, ev.Time)
	}
	return uuids, true
}

// MarkUnhealthy makes a device unhealthy as of t, for a critical event or
// a failed check; it returns whether the device was healthy before.
func (h *HealthState) MarkUnhealthy(uuid string, t time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	last, already := h.lastEvent[uuid]
	if !already || t.After(last) {
		h.lastEvent[uuid] = t
	}
	return !already
}

// Healthy reports a device's health.
func (h *HealthState) Healthy(uuid string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, bad := h.lastEvent[uuid]
	return !bad
}

// Unhealthy returns the unhealthy devices, sorted.
func (h *HealthState) Unhealthy() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.lastEvent))
	for u := range h.lastEvent {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

// Recover makes healthy again the unhealthy devices whose last critical
// event is at least the quiet period before now and for which check
// returns nil, and returns them. With a zero quiet period nothing heals.
// check runs without the state's lock held.
func (h *HealthState) Recover(now time.Time, check func(uuid string) error) []string {
	if h.policy.QuietPeriod <= 0 {
		return nil
	}
	h.mu.Lock()
	var due []string
	for uuid, t := range h.lastEvent {
		if now.Sub(t) >= h.policy.QuietPeriod {
			due = append(due, uuid)
		}
	}
	h.mu.Unlock()
	sort.Strings(due)
	var healed []string
	for _, uuid := range due {
		if check != nil && check(uuid) != nil {
			continue
		}
		h.mu.Lock()
		// An event may have arrived while check ran.
		if t, ok := h.lastEvent[uuid]; ok && now.Sub(t) >= h.policy.QuietPeriod {
			delete(h.lastEvent, uuid)
			healed = append(healed, uuid)
		}
		h.mu.Unlock()
	}
	return healed
}
