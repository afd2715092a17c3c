package ascend

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/deviceplugin"
)

// Vendor advertises Ascend NPUs through pkg/deviceplugin.
type Vendor struct {
	opts Options
	sim  *Simulator

	mu      sync.Mutex
	lib     Lib
	health  *healthMonitor
	chips   []Chip     // discovered by Start
	picker  ChipPicker // started, until Stop
	control *deviceplugin.ControlServer
}

var _ deviceplugin.Vendor = (*Vendor)(nil)

// NewVendor checks the options and builds the simulator if asked.
func NewVendor(o Options) (*Vendor, error) {
	v := &Vendor{opts: o, sim: o.Simulator}
	if o.Backend == deviceplugin.BackendSimulated && v.sim == nil {
		var err error
		if v.sim, err = NewSimulator(o.Simulate); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Simulator returns the simulated machine, or nil with the dcmi backend.
func (v *Vendor) Simulator() *Simulator { return v.sim }

// Name returns "ascend".
func (v *Vendor) Name() string { return deviceplugin.VendorAscend }

// Open returns an initialised device library: sim when set, otherwise
// libdcmi.so from path. The node agent uses it too.
func Open(path string, sim *Simulator) (Lib, error) {
	var lib Lib = sim
	if sim == nil {
		var err error
		if lib, err = OpenDCMI(path); err != nil {
			return nil, err
		}
	}
	if err := lib.Init(); err != nil {
		_ = lib.Shutdown()
		return nil, fmt.Errorf("initialising DCMI: %w", err)
	}
	return lib, nil
}

// Start discovers the chips, starts health polling (and the chip
// picker) and returns one resource manager per chip kind.
func (v *Vendor) Start(ctx context.Context) ([]deviceplugin.ResourceManager, error) {
	logger := klog.FromContext(ctx)
	lib, err := Open(v.opts.DCMILibrary, v.sim)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	v.lib = lib
	v.mu.Unlock()
	if v.sim != nil && v.opts.ControlSocket != "" && v.control == nil {
		if v.control, err = deviceplugin.ServeControl(ctx, v.opts.ControlSocket, func(line string) error { return runCommand(v.sim, line) }); err != nil {
			return nil, err
		}
	}
	chips, err := Discover(lib)
	if err != nil {
		return nil, err
	}
	h := newHealthMonitor(lib, chips, v.opts.HealthPeriod)
	if p := v.opts.Picker; p != nil {
		if err := p.Start(ctx); err != nil {
			return nil, err
		}
	}
	byResource := map[string][]Chip{}
	var order []string
	for _, c := range chips {
		if byResource[c.Resource()] == nil {
			order = append(order, c.Resource())
		}
		byResource[c.Resource()] = append(byResource[c.Resource()], c)
	}
	var out []deviceplugin.ResourceManager
	for _, r := range order {
		out = append(out, newResourceManager(r, byResource[r], h, v.opts))
		logger.Info("Advertising resource", "resource", r, "devices", len(byResource[r]), "picker", v.opts.Picker != nil)
	}
	h.start(ctx)
	v.mu.Lock()
	v.health, v.picker, v.chips = h, v.opts.Picker, chips
	v.mu.Unlock()
	return out, nil
}

// Chips returns the chips the last Start discovered; none before Start
// or after Stop. The node-state reporter (pkg/ascend/nodestate) reads them.
func (v *Vendor) Chips() []Chip {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]Chip(nil), v.chips...)
}

// Health returns the last polled health of the chip with a physical ID.
func (v *Vendor) Health(phy int) ChipHealth {
	v.mu.Lock()
	h := v.health
	v.mu.Unlock()
	if h == nil {
		return ChipHealth{}
	}
	return h.health(phy)
}

// Stop ends health polling and the chip picker and closes the library.
func (v *Vendor) Stop() error {
	v.mu.Lock()
	h, picker, lib := v.health, v.picker, v.lib
	v.health, v.picker, v.lib, v.chips = nil, nil, nil, nil
	v.mu.Unlock()
	if h != nil {
		h.stopAndWait()
	}
	if picker != nil {
		picker.Stop()
	}
	if v.control != nil {
		v.control.Close()
		v.control = nil
	}
	if lib != nil {
		return lib.Shutdown()
	}
	return nil
}

// Reload reports no change: the Ascend vendor has no config file yet.
func (v *Vendor) Reload() (bool, error) { return false, nil }
