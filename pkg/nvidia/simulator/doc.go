// Package simulator is the simulated NVML backend (--backend=simulated):
// go-nvml's mock DGX servers extended with MIG device handles, injectable
// XID events, NVLink and NUMA topology and device readings, with stable
// device IDs per profile so that the device plugin and the node agent,
// each simulating the same profile, see the same devices. RunCommand
// carries out the commands of the simulator's control socket
// (pkg/simcontrol). It is separate from pkg/nvidia, the device model,
// which reads it exactly as it reads NVML, through nvml.Interface.
package simulator
