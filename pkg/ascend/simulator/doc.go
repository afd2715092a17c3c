// Package simulator is the simulated DCMI backend (--backend=simulated with
// an ascend* profile): an ascend.Lib over a simulated Ascend server whose
// chip health, network health and utilization can be changed while it
// runs, signalling each change as DCMI's fault events do. RunCommand
// carries out the commands of the simulator's control socket
// (pkg/simcontrol). It is separate from pkg/ascend, the device model,
// which reads it exactly as it reads libdcmi.so, through ascend.Lib.
package simulator
