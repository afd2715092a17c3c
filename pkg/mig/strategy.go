package mig

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

// Strategy names.
const (
	StrategyNone   = "none"
	StrategySingle = "single"
	StrategyMixed  = "mixed"
)

// ErrNonUniform is returned by the single strategy on a node whose MIG
// layout is not uniform.
var ErrNonUniform = errors.New("mig strategy single needs a uniform node")

// GPU is what a strategy needs to know about one physical GPU.
type GPU struct {
	// ID identifies the GPU (its UUID).
	ID string
	// MIGEnabled is the GPU's current MIG mode.
	MIGEnabled bool
	// Devices are the GPU's MIG devices when MIGEnabled.
	Devices []Device
}

// Device is one MIG device.
type Device struct {
	// ID identifies the MIG device (its UUID).
	ID string
	// Profile is its shape.
	Profile Profile
}

// Assign maps each resource name to the IDs advertised under it, in the
// GPUs' order. Under none, every GPU is nvidia.com/gpu (MIG mode is
// ignored); under mixed, GPUs without MIG are nvidia.com/gpu and MIG
// devices are nvidia.com/mig-<profile>; under single, a node with MIG
// enabled must have it on every GPU with one profile throughout, and its
// MIG devices are nvidia.com/gpu.
func Assign(strategy string, gpus []GPU) (map[string][]string, error) {
	out := map[string][]string{}
	switch strategy {
	case StrategyNone, "":
		for _, g := range gpus {
			out[accelerator.NVIDIAGPU] = append(out[accelerator.NVIDIAGPU], g.ID)
		}
	case StrategyMixed:
		for _, g := range gpus {
			if !g.MIGEnabled {
				out[accelerator.NVIDIAGPU] = append(out[accelerator.NVIDIAGPU], g.ID)
				continue
			}
			for _, d := range g.Devices {
				r := d.Profile.ResourceName()
				out[r] = append(out[r], d.ID)
			}
		}
	case StrategySingle:
		var enabled, disabled []string
		profiles := map[string]bool{}
		for _, g := range gpus {
			if !g.MIGEnabled {
				disabled = append(disabled, g.ID)
				continue
			}
			enabled = append(enabled, g.ID)
			for _, d := range g.Devices {
				profiles[d.Profile.String()] = true
			}
		}
		if len(enabled) == 0 {
			return Assign(StrategyNone, gpus)
		}
		if len(disabled) > 0 {
			return nil, fmt.Errorf("%w: MIG is enabled on %d GPUs and disabled on %d (%s); enable it everywhere or use --mig-strategy=mixed",
				ErrNonUniform, len(enabled), len(disabled), strings.Join(disabled, ", "))
		}
		if len(profiles) > 1 {
			names := make([]string, 0, len(profiles))
			for p := range profiles {
				names = append(names, p)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("%w: more than one MIG device type present (%s); use --mig-strategy=mixed",
				ErrNonUniform, strings.Join(names, ", "))
		}
		for _, g := range gpus {
			for _, d := range g.Devices {
				out[accelerator.NVIDIAGPU] = append(out[accelerator.NVIDIAGPU], d.ID)
			}
		}
	default:
		return nil, fmt.Errorf("unknown mig strategy %q: must be none, single or mixed", strategy)
	}
	return out, nil
}
