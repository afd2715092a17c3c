package plugin

import (
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/ascend"
)

// EnvVisibleDevices is read by Ascend Docker Runtime: the physical IDs of
// the chips to mount into the container.
const EnvVisibleDevices = "ASCEND_VISIBLE_DEVICES"

// Shared device files every container using NPUs needs without Ascend
// Docker Runtime.
var sharedDeviceFiles = []string{"davinci_manager", "devmm_svm", "hisi_hdc"}

// containerResponse tells the runtime how to give chips to a container:
// ASCEND_VISIBLE_DEVICES for Ascend Docker Runtime, or device specs.
func containerResponse(chips []ascend.Chip, useAscendDocker bool, devRoot string) *pluginapi.ContainerAllocateResponse {
	if useAscendDocker {
		ids := make([]string, len(chips))
		for i, c := range chips {
			ids[i] = strconv.Itoa(c.PhyID)
		}
		return &pluginapi.ContainerAllocateResponse{Envs: map[string]string{EnvVisibleDevices: strings.Join(ids, ",")}}
	}
	resp := &pluginapi.ContainerAllocateResponse{}
	add := func(name string) {
		resp.Devices = append(resp.Devices, &pluginapi.DeviceSpec{
			HostPath: filepath.Join(devRoot, name), ContainerPath: filepath.Join("/dev", name), Permissions: "rw",
		})
	}
	for _, c := range chips {
		add("davinci" + strconv.Itoa(c.PhyID))
	}
	for _, f := range sharedDeviceFiles {
		add(f)
	}
	return resp
}

// resolveIDs maps device IDs to chips of a resource, refusing empty,
// unknown, duplicate and unusable IDs with gRPC codes.
func resolveIDs(resource string, byID map[string]ascend.Chip, h *healthMonitor, ids []string) ([]ascend.Chip, error) {
	if len(ids) == 0 {
		return nil, status.Errorf(codes.InvalidArgument, "request for %s has no device IDs", resource)
	}
	seen := map[string]bool{}
	out := make([]ascend.Chip, 0, len(ids))
	for _, id := range ids {
		c, ok := byID[id]
		if !ok {
			return nil, status.Errorf(codes.InvalidArgument, "unknown device ID %q for resource %s on this node", id, resource)
		}
		if seen[id] {
			return nil, status.Errorf(codes.InvalidArgument, "device ID %q requested twice", id)
		}
		seen[id] = true
		if hs := h.health(c.PhyID); !hs.Usable() {
			return nil, status.Errorf(codes.FailedPrecondition, "device %s is unhealthy (health %d, network healthy %t)", id, hs.Health, hs.NetworkHealthy)
		}
		out = append(out, c)
	}
	return out, nil
}
