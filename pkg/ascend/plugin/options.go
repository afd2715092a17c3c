package plugin

import (
	"time"

	"github.com/accelstack/accelstack/pkg/ascend/simulator"
)

// UserAgent is how the Ascend device plugin shows in the API server's logs
// and metrics (Volcano mode and node state).
const UserAgent = "accelstack-ascend-device-plugin"

// Options configure the Ascend vendor.
type Options struct {
	// Backend is dcmi or simulated.
	Backend string
	// Simulate is the simulated profile with the simulated backend.
	Simulate string
	// Simulator, when set, is used instead of building Simulate.
	Simulator *simulator.Simulator
	// DCMILibrary is the path or name of libdcmi.so.
	DCMILibrary string
	// ControlSocket, with the simulated backend, serves the simulator's
	// control socket (fault injection; pkg/simcontrol).
	ControlSocket string
	// UseAscendDocker answers Allocate with ASCEND_VISIBLE_DEVICES for
	// Ascend Docker Runtime instead of device specs.
	UseAscendDocker bool
	// DevRoot is the host directory holding the davinci device files.
	DevRoot string
	// HealthPeriod is the health polling period.
	HealthPeriod time.Duration

	// Picker, when set, chooses the chips of each Allocate instead of
	// the kubelet's IDs (Volcano mode: pkg/ascend/volcano).
	Picker ChipPicker
}

// DefaultOptions returns the defaults: Ascend Docker Runtime, /dev, 5 s
// health polling.
func DefaultOptions() Options {
	return Options{UseAscendDocker: true, DevRoot: "/dev", HealthPeriod: DefaultHealthPeriod}
}
