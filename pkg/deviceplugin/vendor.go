package deviceplugin

import (
	"context"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// Resource is one extended resource the plugin serves (for example
// nvidia.com/gpu or huawei.com/Ascend910): its devices and how to allocate
// them. The Supervisor runs one gRPC server per Resource. All methods must
// be safe for concurrent use.
//
// Allocate sits in the kubelet's serial admission path: it must answer in
// bounded time and fail rather than wait for long. Devices, Changes and
// GetPreferredAllocation work from what the node knows. Allocate may reach
// beyond the node where a vendor mode needs it: Ascend's Volcano mode
// (pkg/ascend/volcano) waits at most volcano.MaxWait (3 s) for the pod to
// appear in a node-local pod informer and then patches that pod's
// annotations through the API server; the other vendors answer from the
// node alone.
type Resource interface {
	// Name returns the extended resource name, e.g. nvidia.com/gpu.
	Name() string
	// Devices returns the full current device list with health and NUMA
	// topology. The plugin sends it to the kubelet on every change.
	Devices() []*pluginapi.Device
	// Changes delivers a value whenever Devices may have changed (health,
	// for example). Sends must not block: a buffered channel of one with a
	// non-blocking send coalesces bursts. The plugin has at most one reader.
	Changes() <-chan struct{}
	// Allocate returns the container settings for the device IDs of one
	// container request. Errors carry gRPC codes (status.Error):
	// codes.InvalidArgument for unknown, duplicate or too many IDs.
	Allocate(ctx context.Context, ids []string) (*pluginapi.ContainerAllocateResponse, error)
	// GetPreferredAllocation picks size IDs out of available, always
	// including mustInclude. It is advisory; errors carry gRPC codes.
	GetPreferredAllocation(ctx context.Context, available, mustInclude []string, size int) ([]string, error)
}

// Vendor discovers a vendor's devices and builds its Resources. The
// Supervisor calls Start once at startup and again after every successful
// Reload; it calls Stop before each restart and at shutdown.
type Vendor interface {
	// Name is the vendor name used in logs and socket names (nvidia, ascend).
	Name() string
	// Start discovers the devices with the current configuration and starts
	// health monitoring, which runs until Stop. It returns one Resource per
	// extended resource; an empty list is valid and advertises nothing. An
	// error means the device library or the devices could not be
	// initialised.
	Start(ctx context.Context) ([]Resource, error)
	// Stop ends what Start started. It is safe to call when Start failed.
	Stop() error
	// Reload re-reads the configuration file. It returns changed=false when
	// the effective configuration is unchanged; on error the previous
	// configuration stays in effect and the error says why.
	Reload() (changed bool, err error)
}
