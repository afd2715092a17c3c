// Package accelerator names the accelerators accelstack knows, for the node
// side and the cluster side alike: the vendors (the device plugin's
// --vendor, the node agent's Device.Vendor), their device libraries
// (--backend), and the extended resources their device plugins advertise,
// which users' pod specs request by name. It imports only the standard
// library, so that the node binaries, the jobs engine and the Resource
// Keeper share one list without linking each other.
package accelerator

import "strings"

// The vendors.
const (
	VendorNVIDIA = "nvidia"
	VendorAscend = "ascend"
)

// The device libraries, the --backend values of the device plugin and the
// node agent.
const (
	// BackendNVML is NVIDIA's library.
	BackendNVML = "nvml"
	// BackendDCMI is Ascend's library.
	BackendDCMI = "dcmi"
	// BackendSimulated is a vendor's simulator, for any vendor.
	BackendSimulated = "simulated"
)

// NVIDIA's extended resources.
const (
	// NVIDIADomain prefixes every NVIDIA resource: whole GPUs, their
	// time-sliced replicas (renamed or not) and MIG devices.
	NVIDIADomain = "nvidia.com/"
	// NVIDIAGPU is whole GPUs, and MIG devices under the single strategy.
	NVIDIAGPU = NVIDIADomain + "gpu"
	// NVIDIAGPUShared is the time-sliced replicas of whole GPUs when
	// renameByDefault is set.
	NVIDIAGPUShared = NVIDIAGPU + ".shared"
	// NVIDIAMIGPrefix prefixes MIG devices under the mixed strategy,
	// nvidia.com/mig-<profile>, e.g. nvidia.com/mig-1g.5gb.
	NVIDIAMIGPrefix = NVIDIADomain + "mig-"
)

// Ascend's extended resources, one per chip kind: huawei.com/<kind>.
const (
	// HuaweiDomain prefixes Huawei's resources.
	HuaweiDomain = "huawei.com/"
	// AscendPrefix prefixes every Ascend chip resource.
	AscendPrefix = HuaweiDomain + "Ascend"
	// Ascend910 is Ascend 910 chips (910B included).
	Ascend910 = AscendPrefix + "910"
	// Ascend310P is Ascend 310P chips.
	Ascend310P = AscendPrefix + "310P"
	// Ascend310 is Ascend 310 chips.
	Ascend310 = AscendPrefix + "310"
)

// IsAccelerator reports whether a container asking for the resource name
// asks for accelerators: whole or time-shared NVIDIA GPUs, MIG devices or
// Ascend chips. The jobs engine keeps them off a launcher and counts them
// as MPI slots.
func IsAccelerator(name string) bool {
	switch name {
	case NVIDIAGPU, NVIDIAGPUShared, Ascend910, Ascend310P, Ascend310:
		return true
	}
	return strings.HasPrefix(name, NVIDIAMIGPrefix)
}

// VendorOf returns the vendor whose device plugin may advertise the
// resource name, "" for none: VendorNVIDIA for every nvidia.com resource
// (time-sliced ones renamed by the config file too) and VendorAscend for
// every huawei.com/Ascend one. The node agent attributes the devices of
// these resources to pods, and the Resource Keeper reads the utilization of
// pods that ask for them.
func VendorOf(name string) string {
	switch {
	case strings.HasPrefix(name, NVIDIADomain):
		return VendorNVIDIA
	case strings.HasPrefix(name, AscendPrefix):
		return VendorAscend
	}
	return ""
}
