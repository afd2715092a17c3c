package nvidia

import (
	"strconv"

	"github.com/accelstack/accelstack/pkg/mig"
)

// Device is one allocatable NVIDIA device: a whole GPU or a MIG device.
type Device struct {
	// UUID is GPU-... or MIG-....
	UUID string
	// Index is the NVML index, "3" for a GPU and "3:1" for a MIG device.
	Index string
	// GPUIndex is the index of the (parent) GPU.
	GPUIndex int
	// Minor is the (parent) GPU's /dev/nvidia<minor>.
	Minor int
	// Name is the product name.
	Name string
	// MemoryBytes is the device's memory.
	MemoryBytes uint64
	// PCIBusID is the (parent) GPU's bus id, e.g. 0000:07:00.0.
	PCIBusID string
	// NUMANode is the (parent) GPU's NUMA node, or -1 when unknown.
	NUMANode int
	// ComputeCapability is major.minor, e.g. 8.0.
	ComputeCapability string
	// MIG is set for MIG devices.
	MIG *MIGInfo
}

// MIGInfo describes a MIG device's place on its parent.
type MIGInfo struct {
	// ParentUUID is the parent GPU's UUID.
	ParentUUID string
	// GPUInstance and ComputeInstance are the NVML instance IDs.
	GPUInstance, ComputeInstance int
	// Profile is the device's shape.
	Profile mig.Profile
}

// GPU is a physical GPU with its MIG devices.
type GPU struct {
	Device
	// MIGEnabled is the current MIG mode.
	MIGEnabled bool
	// MIGDevices are the MIG devices when MIGEnabled.
	MIGDevices []Device
}

// Machine is everything discovery found on the node.
type Machine struct {
	// GPUs in NVML index order.
	GPUs []GPU
	// NVLink[i][j] is true when GPUs i and j have a direct NVLink (or
	// NVSwitch) peer-to-peer path.
	NVLink [][]bool
	// DriverVersion is the kernel driver's version.
	DriverVersion string
}

// ID returns the device's ID under the given strategy (uuid or index).
func (d *Device) ID(strategy string) string {
	if strategy == "index" {
		return d.Index
	}
	return d.UUID
}

// Devices returns every device: whole GPUs and MIG devices, keyed by UUID.
func (m *Machine) Devices() map[string]*Device {
	out := map[string]*Device{}
	for i := range m.GPUs {
		g := &m.GPUs[i]
		out[g.UUID] = &g.Device
		for j := range g.MIGDevices {
			out[g.MIGDevices[j].UUID] = &g.MIGDevices[j]
		}
	}
	return out
}

// MIGGPUs returns the machine's GPUs and MIG devices as pkg/mig reads
// them, for assigning resources under a MIG strategy.
func (m *Machine) MIGGPUs() []mig.GPU {
	out := make([]mig.GPU, 0, len(m.GPUs))
	for _, g := range m.GPUs {
		mg := mig.GPU{ID: g.UUID, MIGEnabled: g.MIGEnabled}
		for _, d := range g.MIGDevices {
			mg.Devices = append(mg.Devices, mig.Device{ID: d.UUID, Profile: d.MIG.Profile})
		}
		out = append(out, mg)
	}
	return out
}

// MIGIndex returns the index of the n-th MIG device of GPU gpu, e.g. 3:1,
// as Device.Index holds it.
func MIGIndex(gpu, n int) string { return strconv.Itoa(gpu) + ":" + strconv.Itoa(n) }
