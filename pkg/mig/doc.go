// Package mig names and advertises NVIDIA MIG devices under the none, single
// and mixed strategies (nvidia.com/mig-<g>g.<mem>gb). Its functions are pure:
// callers describe GPUs and MIG devices with the small types here, so the
// same rules apply to NVML and to simulated machines.
package mig
