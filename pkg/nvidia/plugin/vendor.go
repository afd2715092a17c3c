package plugin

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
	"github.com/accelstack/accelstack/pkg/nvidia"
	"github.com/accelstack/accelstack/pkg/nvidia/simulator"
	"github.com/accelstack/accelstack/pkg/simcontrol"
)

// Vendor advertises NVIDIA GPUs through pkg/deviceplugin.
type Vendor struct {
	opts Options

	mu       sync.Mutex
	settings nvidia.Settings
	raw      []byte // config file content of settings

	sim     *simulator.Simulator
	lib     nvml.Interface // open from Start to Stop, nil otherwise
	health  *healthMonitor
	control *simcontrol.Server
}

var _ deviceplugin.Vendor = (*Vendor)(nil)

// NewVendor validates the options and the config file; an invalid
// configuration is refused here, before anything is advertised.
func NewVendor(o Options) (*Vendor, error) {
	s, raw, err := o.Resolve()
	if err != nil {
		return nil, err
	}
	v := &Vendor{opts: o, settings: s, raw: raw, sim: o.Simulator}
	if o.Backend == accelerator.BackendSimulated && v.sim == nil {
		if v.sim, err = simulator.New(o.Simulate); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Settings returns the effective settings.
func (v *Vendor) Settings() nvidia.Settings {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.settings
}

// Simulator returns the simulated machine, or nil with the nvml backend.
func (v *Vendor) Simulator() *simulator.Simulator { return v.sim }

// HealthCounts returns the critical XID events and recoveries counted
// since the last Start.
func (v *Vendor) HealthCounts() (events, recovered int) {
	v.mu.Lock()
	h := v.health
	v.mu.Unlock()
	if h == nil {
		return 0, 0
	}
	return h.counts()
}

// Name returns "nvidia".
func (v *Vendor) Name() string { return accelerator.VendorNVIDIA }

// Start discovers the GPUs, starts health monitoring and returns one
// Resource per extended resource.
func (v *Vendor) Start(ctx context.Context) ([]deviceplugin.Resource, error) {
	logger := klog.FromContext(ctx)
	v.mu.Lock()
	s := v.settings
	v.mu.Unlock()
	lib := nvml.New()
	if v.sim != nil {
		lib = v.sim
	}
	if err := nvidia.Open(lib); err != nil {
		return nil, err
	}
	v.lib = lib
	if v.sim != nil && v.opts.ControlSocket != "" && v.control == nil {
		c, err := simcontrol.Serve(ctx, v.opts.ControlSocket, v.sim.RunCommand)
		if err != nil {
			return nil, err
		}
		v.control = c
	}
	m, err := nvidia.Discover(lib)
	if err != nil {
		return nil, fmt.Errorf("discovering GPUs: %w", err)
	}
	specs, err := buildResources(m, s, logger)
	if err != nil {
		return nil, err
	}
	h := newHealthMonitor(ctx, lib, m, v.opts)
	var out []deviceplugin.Resource
	for _, spec := range specs {
		out = append(out, newResource(spec, m, s, v.opts.DevRoot, h))
		logger.Info("Advertising resource", "resource", spec.name, "devices", len(spec.devices), "replicated", spec.replicated)
	}
	h.start()
	v.mu.Lock()
	v.health = h
	v.mu.Unlock()
	return out, nil
}

// Stop ends health monitoring and closes the device library.
func (v *Vendor) Stop() error {
	v.mu.Lock()
	h := v.health
	v.health = nil
	v.mu.Unlock()
	if h != nil {
		h.stopAndWait()
	}
	if v.control != nil {
		v.control.Close()
		v.control = nil
	}
	if v.lib == nil {
		return nil
	}
	lib := v.lib
	v.lib = nil
	return nvidia.Close(lib)
}

// Reload re-reads the config file; a bad file leaves the settings as they were.
func (v *Vendor) Reload() (bool, error) {
	s, raw, err := v.opts.Resolve()
	if err != nil {
		return false, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if sameSettings(v.settings, s, v.raw, raw) {
		return false, nil
	}
	v.settings, v.raw = s, raw
	return true, nil
}

// sameSettings compares settings and the file they came from.
func sameSettings(a, b nvidia.Settings, rawA, rawB []byte) bool {
	return reflect.DeepEqual(a, b) && bytes.Equal(rawA, rawB)
}
