// Package plugin is the NVIDIA side of the device plugin: Vendor and its
// Resources implement pkg/deviceplugin's interfaces over the device model
// of pkg/nvidia. It applies the MIG strategy (pkg/mig) and time-slicing
// replicas to the discovered GPUs, answers Allocate for the NVIDIA
// container runtime, picks topology-aware preferred allocations, and
// watches XID events to mark devices unhealthy and heal them.
// Registration brings it, with its flags, into cmd/device-plugin. It is
// separate from pkg/nvidia so that the node agent, which reads the same
// devices, links neither pkg/deviceplugin nor the kubelet device-plugin API.
package plugin
