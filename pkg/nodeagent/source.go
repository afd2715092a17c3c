package nodeagent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

// Source reads the devices of one vendor. Implementations: NVIDIASource
// over pkg/nvidia and AscendSource over pkg/ascend, each registered in
// vendors.
type Source interface {
	// Name names the source in logs and in the errors metric.
	Name() string
	// Collect reads every device once. It may return a partial snapshot
	// together with an error; the agent serves what it got. It must
	// return when ctx ends.
	Collect(ctx context.Context) (SourceSnapshot, error)
	// Close releases the device library.
	Close() error
}

// sourceVendor is how the agent reads one vendor's devices.
type sourceVendor struct {
	// name is the vendor, as Device.Vendor.
	name string
	// backend is the vendor's device library, a value of --backend.
	backend string
	// profiles are the vendor's simulated machines: --backend=simulated
	// reads the vendor whose profile --simulate names.
	profiles func() []string
	// newSource returns the vendor's Source for cfg.
	newSource func(ctx context.Context, cfg Config) (Source, error)
}

// vendors are the vendors the agent reads, one line each, each defined
// beside its Source (nvidiaVendor in nvidia_source.go).
var vendors = []sourceVendor{nvidiaVendor, ascendVendor}

// Backends returns the values of --backend: each vendor's device library,
// then simulated.
func Backends() []string {
	out := make([]string, 0, len(vendors)+1)
	for _, v := range vendors {
		out = append(out, v.backend)
	}
	return append(out, accelerator.BackendSimulated)
}

// vendorFor returns the vendor cfg's backend names: the vendor of the
// device library, or, simulated, the vendor of the profile.
func vendorFor(cfg Config) (sourceVendor, error) {
	var profiles []string
	for _, v := range vendors {
		if cfg.Backend == v.backend {
			return v, nil
		}
		if cfg.Backend == accelerator.BackendSimulated {
			p := v.profiles()
			if slices.Contains(p, cfg.Simulate) {
				return v, nil
			}
			profiles = append(profiles, p...)
		}
	}
	if cfg.Backend == accelerator.BackendSimulated {
		return sourceVendor{}, fmt.Errorf("unknown simulated profile %q: must be one of %s", cfg.Simulate, strings.Join(profiles, ", "))
	}
	return sourceVendor{}, fmt.Errorf("unknown backend %q: must be one of %s", cfg.Backend, strings.Join(Backends(), ", "))
}
