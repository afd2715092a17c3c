package plugin

import (
	"time"

	"github.com/accelstack/accelstack/pkg/nvidia"
	"github.com/accelstack/accelstack/pkg/nvidia/simulator"
)

// Options configure the NVIDIA vendor: the options it shares with the node
// agent (backend, config file, settings, health policy) and its own.
type Options struct {
	nvidia.Options

	// Simulator, when set with the simulated backend, is used instead of
	// building the Simulate profile.
	Simulator *simulator.Simulator
	// ControlSocket, with the simulated backend, serves the simulator's
	// control socket (XID injection; pkg/simcontrol).
	ControlSocket string
	// DevRoot is where the host's /dev/nvidia* files are, for device specs.
	DevRoot string
	// HealthWait bounds one NVML event wait (and so shutdown latency).
	HealthWait time.Duration
}

// DefaultOptions returns NVIDIA's defaults.
func DefaultOptions() Options {
	return Options{
		Options:    nvidia.DefaultOptions(),
		DevRoot:    "/dev",
		HealthWait: 200 * time.Millisecond,
	}
}
