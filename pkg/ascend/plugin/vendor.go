package plugin

import (
	"context"
	"sync"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/ascend"
	"github.com/accelstack/accelstack/pkg/ascend/simulator"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
	"github.com/accelstack/accelstack/pkg/simcontrol"
)

// Vendor advertises Ascend NPUs through pkg/deviceplugin.
type Vendor struct {
	opts Options
	sim  *simulator.Simulator

	mu      sync.Mutex
	lib     ascend.Lib
	health  *healthMonitor
	chips   []ascend.Chip // discovered by Start
	picker  ChipPicker    // started, until Stop
	control *simcontrol.Server
}

var _ deviceplugin.Vendor = (*Vendor)(nil)

// NewVendor checks the options and builds the simulator if asked.
func NewVendor(o Options) (*Vendor, error) {
	v := &Vendor{opts: o, sim: o.Simulator}
	if o.Backend == accelerator.BackendSimulated && v.sim == nil {
		var err error
		if v.sim, err = simulator.New(o.Simulate); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Simulator returns the simulated machine, or nil with the dcmi backend.
func (v *Vendor) Simulator() *simulator.Simulator { return v.sim }

// Name returns "ascend".
func (v *Vendor) Name() string { return accelerator.VendorAscend }

// Start discovers the chips, starts health polling (and the chip
// picker) and returns one Resource per chip kind.
func (v *Vendor) Start(ctx context.Context) ([]deviceplugin.Resource, error) {
	logger := klog.FromContext(ctx)
	var sim ascend.Lib
	if v.sim != nil {
		sim = v.sim
	}
	lib, err := ascend.Open(v.opts.DCMILibrary, sim)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	v.lib = lib
	v.mu.Unlock()
	if v.sim != nil && v.opts.ControlSocket != "" && v.control == nil {
		if v.control, err = simcontrol.Serve(ctx, v.opts.ControlSocket, v.sim.RunCommand); err != nil {
			return nil, err
		}
	}
	chips, err := ascend.Discover(lib)
	if err != nil {
		return nil, err
	}
	h := newHealthMonitor(lib, chips, v.opts.HealthPeriod)
	if p := v.opts.Picker; p != nil {
		if err := p.Start(ctx); err != nil {
			return nil, err
		}
	}
	byResource := map[string][]ascend.Chip{}
	var order []string
	for _, c := range chips {
		if byResource[c.Resource()] == nil {
			order = append(order, c.Resource())
		}
		byResource[c.Resource()] = append(byResource[c.Resource()], c)
	}
	var out []deviceplugin.Resource
	for _, r := range order {
		out = append(out, newResource(r, byResource[r], h, v.opts))
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
func (v *Vendor) Chips() []ascend.Chip {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]ascend.Chip(nil), v.chips...)
}

// Health returns the last polled health of the chip with a physical ID.
func (v *Vendor) Health(phy int) ascend.ChipHealth {
	v.mu.Lock()
	h := v.health
	v.mu.Unlock()
	if h == nil {
		return ascend.ChipHealth{}
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
