package mig

import (
	"fmt"
	"math"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

// Profile describes a MIG device's shape.
type Profile struct {
	// GPUSlices is the GPU instance's slice count (the "g").
	GPUSlices int
	// ComputeSlices is the compute instance's slice count (the "c").
	ComputeSlices int
	// MemoryGB is the memory in NVIDIA's rounded GB.
	MemoryGB int
	// MediaExtensions is set for "+me" profiles.
	MediaExtensions bool
}

// String returns NVIDIA's profile name: 1g.5gb, 1c.2g.10gb, 1g.5gb+me.
func (p Profile) String() string {
	s := fmt.Sprintf("%dg.%dgb", p.GPUSlices, p.MemoryGB)
	if p.ComputeSlices != p.GPUSlices {
		s = fmt.Sprintf("%dc.%s", p.ComputeSlices, s)
	}
	if p.MediaExtensions {
		s += "+me"
	}
	return s
}

// ResourceName returns the mixed-strategy resource name,
// nvidia.com/mig-<profile> with "+" turned into ".".
func (p Profile) ResourceName() string {
	name := accelerator.NVIDIAMIGPrefix + fmt.Sprintf("%dg.%dgb", p.GPUSlices, p.MemoryGB)
	if p.ComputeSlices != p.GPUSlices {
		name = accelerator.NVIDIAMIGPrefix + fmt.Sprintf("%dc.%dg.%dgb", p.ComputeSlices, p.GPUSlices, p.MemoryGB)
	}
	if p.MediaExtensions {
		name += ".me"
	}
	return name
}

// MemoryGB rounds a MIG device's memory the way NVIDIA names profiles: its
// share of the parent's memory, rounded up to an eighth, times the parent's
// memory in whole GB (rounded up). A 4864 MiB slice of a 40 GiB A100 is 5gb.
func MemoryGB(parentTotalBytes, migMemoryMB uint64) int {
	const mib, gib = 1 << 20, 1 << 30
	if parentTotalBytes == 0 {
		return 0
	}
	frac := float64(migMemoryMB*mib) / float64(parentTotalBytes)
	frac = math.Ceil(frac*8) / 8
	totalGB := float64((parentTotalBytes + gib - 1) / gib)
	return int(math.Round(frac * totalGB))
}
