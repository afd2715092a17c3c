// Package nvidia discovers NVIDIA GPUs for the device plugin and the node
// agent, through NVML (github.com/NVIDIA/go-nvml) or a simulated machine
// built on go-nvml's mock servers.
package nvidia
