package nvidia

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/deviceplugin"
)

// Vendor advertises NVIDIA GPUs through pkg/deviceplugin.
type Vendor struct {
	opts Options

	mu       sync.Mutex
	settings Settings
	raw      []byte // config file content of settings

	sim     *Simulator
	lib     nvml.Interface
	health  *healthMonitor
	control *deviceplugin.ControlServer
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
	if o.Backend == "simulated" && v.sim == nil {
		if v.sim, err = NewSimulator(o.Simulate); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Settings returns the effective settings.
func (v *Vendor) Settings() Settings {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.settings
}

// Simulator returns the simulated machine, or nil with the nvml backend.
func (v *Vendor) Simulator() *Simulator { return v.sim }

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
func (v *Vendor) Name() string { return "nvidia" }

// Open initialises the device library of the options: NVML or the
// simulator. The node agent uses it too.
func Open(o Options, sim *Simulator) (nvml.Interface, error) {
	if sim != nil {
		return sim, nil
	}
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if errors.Is(ret, nvml.ERROR_LIBRARY_NOT_FOUND) {
			return nil, fmt.Errorf("NVML library libnvidia-ml.so.1 not found: is the NVIDIA driver installed and the library mounted into the container? (%w)", ret)
		}
		return nil, fmt.Errorf("initialising NVML: %w", ret)
	}
	return lib, nil
}

// Start discovers the GPUs, starts health monitoring and returns one
// resource manager per resource.
func (v *Vendor) Start(ctx context.Context) ([]deviceplugin.ResourceManager, error) {
	logger := klog.FromContext(ctx)
	v.mu.Lock()
	s := v.settings
	v.mu.Unlock()
	lib, err := Open(v.opts, v.sim)
	if err != nil {
		return nil, err
	}
	v.lib = lib
	if v.sim != nil && v.opts.ControlSocket != "" && v.control == nil {
		c, err := deviceplugin.ServeControl(ctx, v.opts.ControlSocket, func(line string) error { return runCommand(v.sim, line) })
		if err != nil {
			return nil, err
		}
		v.control = c
	}
	m, err := Discover(lib)
	if err != nil {
		return nil, fmt.Errorf("discovering GPUs: %w", err)
	}
	specs, err := buildResources(m, s, logger)
	if err != nil {
		return nil, err
	}
	h := newHealthMonitor(ctx, lib, m, v.opts)
	var out []deviceplugin.ResourceManager
	for _, spec := range specs {
		out = append(out, newResourceManager(spec, m, s, v.opts.DevRoot, h))
		logger.Info("Advertising resource", "resource", spec.name, "devices", len(spec.devices), "replicated", spec.replicated)
	}
	h.start()
	v.mu.Lock()
	v.health = h
	v.mu.Unlock()
	return out, nil
}

// Stop ends health monitoring and shuts NVML down.
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
	if v.lib != nil && v.sim == nil {
		if ret := v.lib.Shutdown(); ret != nvml.SUCCESS {
			v.lib = nil
			return fmt.Errorf("shutting NVML down: %w", ret)
		}
	}
	v.lib = nil
	return nil
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
