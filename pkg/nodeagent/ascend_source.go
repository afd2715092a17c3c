package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/ascend"
	ascendsim "github.com/accelstack/accelstack/pkg/ascend/simulator"
)

// ascendVendor reads Ascend NPUs: --backend=dcmi, or simulated with a
// profile of pkg/ascend/simulator.
var ascendVendor = sourceVendor{
	name:     accelerator.VendorAscend,
	backend:  accelerator.BackendDCMI,
	profiles: ascendsim.Profiles,
	newSource: func(_ context.Context, cfg Config) (Source, error) {
		if cfg.Backend != accelerator.BackendSimulated {
			return NewAscendSource(cfg.DCMILibrary, nil), nil
		}
		sim, err := ascendsim.New(cfg.Simulate)
		if err != nil {
			return nil, err
		}
		return NewAscendSource("", sim), nil
	},
}

// AscendSource reads Huawei Ascend NPUs through pkg/ascend: the same DCMI
// or simulated backend and discovery as the device plugin.
type AscendSource struct {
	path string
	sim  ascend.Lib

	mu    sync.Mutex
	lib   ascend.Lib
	chips []ascend.Chip
}

var _ Source = (*AscendSource)(nil)

// NewAscendSource returns a source over the DCMI library at path, or over
// sim, a simulated machine (pkg/ascend/simulator), when it is not nil. The
// library is opened on the first Collect and again after failures, so a
// node whose driver comes up late is picked up.
func NewAscendSource(path string, sim ascend.Lib) *AscendSource {
	return &AscendSource{path: path, sim: sim}
}

// Name returns "ascend".
func (s *AscendSource) Name() string { return accelerator.VendorAscend }

// Collect reads every chip: health, utilization, temperature, power and
// memory, and the servertype node label.
func (s *AscendSource) Collect(ctx context.Context) (SourceSnapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lib == nil {
		lib, err := ascend.Open(s.path, s.sim)
		if err != nil {
			return SourceSnapshot{}, err
		}
		chips, err := ascend.Discover(lib)
		if err != nil {
			return SourceSnapshot{}, errors.Join(err, lib.Shutdown())
		}
		s.lib, s.chips = lib, chips
	}
	var snap SourceSnapshot
	var errs []error
	for _, c := range s.chips {
		if ctx.Err() != nil {
			return snap, ctx.Err()
		}
		d, err := s.read(c)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading %s: %w", c.ID(), err))
		}
		snap.Devices = append(snap.Devices, d)
	}
	if len(s.chips) > 0 {
		c := s.chips[0]
		snap.NodeLabels = AscendLabels(c.Model(), c.Info.AICores, len(s.chips))
	}
	return snap, errors.Join(errs...)
}

// read reads one chip; readings the library lacks are left unset.
func (s *AscendSource) read(c ascend.Chip) (Device, error) {
	d := Device{Vendor: accelerator.VendorAscend, ID: c.ID(), Index: strconv.Itoa(c.PhyID), Minor: c.PhyID, Model: c.Model()}
	var errs []error
	keep := func(err error) bool {
		if err != nil && !errors.Is(err, ascend.ErrNotSupported) {
			errs = append(errs, err)
		}
		return err == nil
	}
	h, err := s.lib.Health(c.Card, c.Device)
	d.Healthy = keep(err) && ascend.HealthyCode(h)
	if u, err := s.lib.Utilization(c.Card, c.Device); keep(err) {
		d.Set(FieldUtilization, float64(u))
	}
	if t, err := s.lib.Temperature(c.Card, c.Device); keep(err) {
		d.Set(FieldTemperatureCelsius, float64(t))
	}
	if w, err := s.lib.Power(c.Card, c.Device); keep(err) {
		d.Set(FieldPowerWatts, w)
	}
	if m, err := s.lib.Memory(c.Card, c.Device); keep(err) {
		d.Set(FieldMemoryUsedBytes, float64(m.UsedBytes))
		d.Set(FieldMemoryTotalBytes, float64(m.TotalBytes))
		d.Set(FieldMemoryFreeBytes, float64(m.TotalBytes-m.UsedBytes))
	}
	if m, err := s.lib.HBM(c.Card, c.Device); keep(err) {
		d.Set(FieldHBMUsedBytes, float64(m.UsedBytes))
	}
	return d, errors.Join(errs...)
}

// Close shuts the library down.
func (s *AscendSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lib == nil {
		return nil
	}
	err := s.lib.Shutdown()
	s.lib = nil
	return err
}
