// Package nvidia discovers NVIDIA GPUs for the device plugin and the node
// agent, through NVML (github.com/NVIDIA/go-nvml) or a simulated machine
// built on go-nvml's mock servers.
//
// Everything reads devices through nvml.Interface: Open returns the real
// library or a Simulator, Discover turns it into a Machine (GPUs, MIG
// devices, NVLink and NUMA topology), and ReadStats samples what the node
// agent exports. The Vendor type plugs the GPUs into pkg/deviceplugin:
// MIG strategies come from pkg/mig, time-slicing replicas, Allocate
// responses, topology-aware preferred allocation and XID health with
// recovery are implemented here.
package nvidia
