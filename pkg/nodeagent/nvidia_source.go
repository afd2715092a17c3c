package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/nvidia"
	"github.com/accelstack/accelstack/pkg/nvidia/simulator"
)

// nvidiaVendor reads NVIDIA GPUs: --backend=nvml, or simulated with a
// profile of pkg/nvidia/simulator.
var nvidiaVendor = sourceVendor{
	name:     accelerator.VendorNVIDIA,
	backend:  accelerator.BackendNVML,
	profiles: simulator.Profiles,
	newSource: func(ctx context.Context, cfg Config) (Source, error) {
		o := nvidia.DefaultOptions()
		o.Backend, o.Simulate, o.ConfigFile = cfg.Backend, cfg.Simulate, cfg.ConfigFile
		o.DisableHealthChecks, o.EnableHealthChecks = cfg.DisableHealthChecks, cfg.EnableHealthChecks
		o.HealthQuietPeriod = cfg.HealthQuietPeriod
		o.Set = map[string]bool{}
		if cfg.MigStrategy != "" {
			o.MigStrategy = cfg.MigStrategy
			o.Set[nvidia.FlagMigStrategy] = true
		}
		src, err := NewNVIDIASource(ctx, o, cfg.Simulator)
		if err != nil {
			return nil, fmt.Errorf("NVIDIA backend: %w", err)
		}
		return src, nil
	},
}

// NVIDIASource reads NVIDIA GPUs through pkg/nvidia: the same NVML or
// simulated backend, discovery and config file parser as the device plugin.
type NVIDIASource struct {
	opts   nvidia.Options
	sim    *simulator.Simulator
	health *nvidia.HealthState
	log    klog.Logger

	mu       sync.Mutex
	lib      nvml.Interface // open, nil until the first Collect succeeds
	xid      *xidWatcher
	settings nvidia.Settings
	machine  *nvidia.Machine // last discovered
}

var _ Source = (*NVIDIASource)(nil)

// NewNVIDIASource returns a source for opts (Backend, Simulate,
// ConfigFile and the flag-given settings), reading sim instead when it is
// not nil. A bad simulated profile is an error; the library itself is
// opened on the first Collect and again after failures, so a node whose
// driver comes up late is picked up. Health follows the device plugin's
// rule (opts.Policy(): DisableHealthChecks, EnableHealthChecks and
// HealthQuietPeriod): a critical XID makes the devices it concerns
// unhealthy, and they are healthy again once quiet for the quiet period and
// passing the plugin's NVML check.
func NewNVIDIASource(ctx context.Context, opts nvidia.Options, sim *simulator.Simulator) (*NVIDIASource, error) {
	s := &NVIDIASource{opts: opts, sim: sim, settings: opts.Settings,
		health: nvidia.NewHealthState(opts.Policy()), log: klog.FromContext(ctx).WithName("nvidia")}
	if opts.Backend == accelerator.BackendSimulated && s.sim == nil {
		sim, err := simulator.New(opts.Simulate)
		if err != nil {
			return nil, err
		}
		s.sim = sim
	}
	return s, nil
}

// Simulator returns the simulated machine, or nil with NVML.
func (s *NVIDIASource) Simulator() *simulator.Simulator { return s.sim }

// Name returns "nvidia".
func (s *NVIDIASource) Name() string { return accelerator.VendorNVIDIA }

// Collect reads the config file, then every GPU and MIG device.
func (s *NVIDIASource) Collect(ctx context.Context) (SourceSnapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if settings, _, err := s.opts.Resolve(); err != nil {
		errs = append(errs, fmt.Errorf("keeping the last good settings: %w", err))
	} else {
		s.settings = settings
	}
	if s.lib == nil {
		lib := nvml.New()
		if s.sim != nil {
			lib = s.sim
		}
		if err := nvidia.Open(lib); err != nil {
			return SourceSnapshot{}, errors.Join(append(errs, err)...)
		}
		s.lib = lib
		if w, err := startXIDWatcher(lib, s.log); err != nil {
			s.log.Error(err, "XID events unavailable; DCGM_FI_DEV_XID_ERRORS stays 0")
		} else {
			s.xid = w
		}
	}
	m, err := nvidia.Discover(s.lib)
	switch {
	case err == nil:
		s.machine = m
	case s.machine != nil:
		// One GPU failing (lost, fallen off the bus) must not hide the
		// others: read the devices found last time; the failing one
		// reads as unhealthy.
		errs = append(errs, fmt.Errorf("discovering GPUs, reading the last ones found: %w", err))
		m = s.machine
	default:
		return SourceSnapshot{}, errors.Join(append(errs, fmt.Errorf("discovering GPUs: %w", err))...)
	}
	now := time.Now()
	s.updateHealth(m, now)
	var out SourceSnapshot
	migCapable := false
	for i := range m.GPUs {
		devs, capable, err := s.readGPU(&m.GPUs[i])
		if err != nil {
			errs = append(errs, err)
		}
		migCapable = migCapable || capable
		out.Devices = append(out.Devices, devs...)
	}
	labels, err := GFDLabels(m, migCapable, s.settings)
	if err != nil {
		errs = append(errs, fmt.Errorf("node labels: %w", err))
	}
	out.NodeLabels = labels
	return out, errors.Join(errs...)
}

// readGPU reads one GPU and its MIG devices. A reading the device does
// not support is left unset, so it produces no series (not a 0). A MIG
// device carries its parent's whole-GPU readings (temperature, power,
// energy, clocks, PCIe) unless NVML gives its own, and its own memory;
// utilization only where NVML reports it per MIG device (it does not).
func (s *NVIDIASource) readGPU(g *nvidia.GPU) ([]Device, bool, error) {
	var errs []error
	d := Device{Vendor: accelerator.VendorNVIDIA, ID: g.UUID, Aliases: []string{g.Index}, Index: g.Index,
		Minor: g.Minor, Model: g.Name, PCIBusID: g.PCIBusID, Healthy: true}
	capable := false
	h, ret := s.lib.DeviceGetHandleByIndex(g.GPUIndex)
	if ret != nvml.SUCCESS {
		d.Healthy = false
		errs = append(errs, fmt.Errorf("GPU %s (%s): opening: %w", g.Index, g.UUID, ret))
		h = nil
	} else {
		st, err := nvidia.ReadDeviceStats(h)
		if err != nil {
			d.Healthy = false
			errs = append(errs, fmt.Errorf("GPU %s (%s): reading memory: %w", g.Index, g.UUID, err))
		}
		setStats(&d, st)
		_, _, ret := h.GetMigMode()
		capable = ret == nvml.SUCCESS
	}
	s.applyXID(&d, g.UUID, -1)
	out := []Device{d}
	for _, md := range g.MIGDevices {
		m := d
		m.ID, m.Aliases, m.Healthy = md.UUID, []string{md.Index}, d.Healthy
		m.MIG = &MIGInstance{Profile: md.MIG.Profile.String(), GPUInstance: md.MIG.GPUInstance, ParentID: g.UUID}
		m.unset(FieldUtilization, FieldMemoryCopyUtilization, FieldMemoryUsedBytes, FieldMemoryFreeBytes, FieldMemoryTotalBytes, FieldXID)
		if h != nil {
			if err := readMIG(h, &m, md.Index); err != nil {
				m.Healthy = false
				errs = append(errs, fmt.Errorf("MIG device %s (%s): %w", md.Index, md.UUID, err))
			}
		}
		s.applyXID(&m, g.UUID, md.MIG.GPUInstance)
		out = append(out, m)
	}
	return out, capable, errors.Join(errs...)
}

// setStats records the readings st has.
func setStats(d *Device, st nvidia.Stats) {
	if st.Has(nvidia.ReadingUtilization) {
		d.Set(FieldUtilization, float64(st.GPUUtilization))
		d.Set(FieldMemoryCopyUtilization, float64(st.MemoryUtilization))
	}
	if st.Has(nvidia.ReadingTemperature) {
		d.Set(FieldTemperatureCelsius, float64(st.TemperatureC))
	}
	if st.Has(nvidia.ReadingPower) {
		d.Set(FieldPowerWatts, float64(st.PowerMilliwatts)/1000)
	}
	if st.Has(nvidia.ReadingEnergy) {
		d.Set(FieldEnergyMillijoules, float64(st.EnergyMillijoules))
	}
	if st.Has(nvidia.ReadingSMClock) {
		d.Set(FieldSMClockMHz, float64(st.SMClockMHz))
	}
	if st.Has(nvidia.ReadingMemoryClock) {
		d.Set(FieldMemoryClockMHz, float64(st.MemoryClockMHz))
	}
	if st.Has(nvidia.ReadingPCIeReplays) {
		d.Set(FieldPCIeReplays, float64(st.PCIeReplays))
	}
	if st.Has(nvidia.ReadingMemory) {
		d.Set(FieldMemoryUsedBytes, float64(st.MemoryUsedBytes))
		d.Set(FieldMemoryFreeBytes, float64(st.MemoryTotalBytes-min(st.MemoryUsedBytes, st.MemoryTotalBytes)))
		d.Set(FieldMemoryTotalBytes, float64(st.MemoryTotalBytes))
	}
}

// readMIG reads a MIG device through its parent's handle.
func readMIG(parent nvml.Device, d *Device, index string) error {
	_, j, ok := strings.Cut(index, ":")
	n, err := strconv.Atoi(j)
	if !ok || err != nil {
		return fmt.Errorf("bad MIG index %q", index)
	}
	h, ret := parent.GetMigDeviceHandleByIndex(n)
	if ret != nvml.SUCCESS {
		return ret
	}
	st, err := nvidia.ReadDeviceStats(h)
	setStats(d, st)
	if err != nil {
		return fmt.Errorf("reading memory: %w", err)
	}
	return nil
}

// updateHealth applies the XID events seen since the last collection to
// the health state, then heals the devices the policy lets recover.
func (s *NVIDIASource) updateHealth(m *nvidia.Machine, now time.Time) {
	if s.xid != nil {
		for _, ev := range s.xid.drain() {
			if uuids, critical := s.health.Record(m, ev); critical {
				s.log.Info("Device unhealthy", "uuids", uuids, "xid", ev.XID, "reason", "XID event")
			}
		}
	}
	for _, uuid := range s.health.Recover(now, func(uuid string) error { return nvidia.CheckDevice(s.lib, m, uuid) }) {
		s.log.Info("Device healthy again", "uuid", uuid, "quietPeriod", s.health.Policy().QuietPeriod)
	}
}

// applyXID sets the last XID seen on a device and its health under the
// device plugin's rule (a failed read already made it unhealthy).
func (s *NVIDIASource) applyXID(d *Device, uuid string, instance int) {
	d.Healthy = d.Healthy && s.health.Healthy(d.ID)
	d.Set(FieldXID, 0)
	if s.xid == nil {
		return
	}
	if ev, ok := s.xid.lastFor(uuid, instance); ok {
		d.Set(FieldXID, float64(ev.xid))
	}
}

// Close stops XID watching and closes the device library.
func (s *NVIDIASource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.xid != nil {
		s.xid.close()
		s.xid = nil
	}
	lib := s.lib
	s.lib, s.machine = nil, nil
	if lib == nil {
		return nil
	}
	return nvidia.Close(lib)
}
