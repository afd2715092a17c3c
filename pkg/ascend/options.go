package ascend

import (
	"time"

	"k8s.io/client-go/kubernetes"
)

// Options configure the Ascend vendor.
type Options struct {
	// Backend is dcmi or simulated.
	Backend string
	// Simulate is the simulated profile with the simulated backend.
	Simulate string
	// Simulator, when set, is used instead of building Simulate.
	Simulator *Simulator
	// DCMILibrary is the path or name of libdcmi.so.
	DCMILibrary string
	// ControlSocket, with the simulated backend, serves fault injection.
	ControlSocket string
	// UseAscendDocker answers Allocate with ASCEND_VISIBLE_DEVICES for
	// Ascend Docker Runtime instead of device specs.
	UseAscendDocker bool
	// DevRoot is the host directory holding the davinci device files.
	DevRoot string
	// HealthPeriod is the health polling period.
	HealthPeriod time.Duration

	// Volcano makes Allocate use the chips Volcano annotated on the pod.
	Volcano bool
	// NodeName is this node, required with Volcano.
	NodeName string
	// Client reaches the API server in Volcano mode.
	Client kubernetes.Interface
	// VolcanoWait bounds how long Allocate waits for the pod to appear in
	// the informer cache; at most MaxVolcanoWait.
	VolcanoWait time.Duration
}

// MaxVolcanoWait is the longest Allocate waits for Volcano's pod.
const MaxVolcanoWait = 3 * time.Second

// DefaultOptions returns the defaults: Ascend Docker Runtime, /dev, 5 s
// health polling.
func DefaultOptions() Options {
	return Options{UseAscendDocker: true, DevRoot: "/dev", HealthPeriod: DefaultHealthPeriod, VolcanoWait: MaxVolcanoWait}
}
