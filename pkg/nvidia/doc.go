// Package nvidia is the NVIDIA device model that the device plugin and the
// node agent share: it reads GPUs through NVML (github.com/NVIDIA/go-nvml)
// or a simulated machine (pkg/nvidia/simulator), both as nvml.Interface.
//
// Open and Close start and shut down the library, Discover turns it into a
// Machine (GPUs, MIG devices, NVLink and NUMA topology), ReadStats samples
// what the node agent exports, and HealthPolicy and HealthState are the XID
// health rule both binaries apply. Options resolve the device plugin's
// settings from flags and its config file, which the node agent reads for
// its labels. The device-plugin side (resources, Allocate, preferred
// allocation) is pkg/nvidia/plugin; this package imports neither it nor
// the kubelet device-plugin API, so the node agent links neither.
package nvidia
