package plugin

import (
	"fmt"
	"path/filepath"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	configv1 "github.com/accelstack/accelstack/api/config/v1"
	"github.com/accelstack/accelstack/pkg/nvidia"
)

// Container-side names used by Allocate.
const (
	VisibleDevicesEnv = "NVIDIA_VISIBLE_DEVICES"
	// DeviceListVolumeDir is where volume-mounts strategy lists devices.
	DeviceListVolumeDir = "/var/run/nvidia-container-devices"
)

// validateRequest checks one container request against the advertised
// IDs and returns the distinct devices in request order. Errors are gRPC
// InvalidArgument errors naming the offending ID.
func validateRequest(r *resourceSpec, byID map[string]*advertised, ids []string) ([]*nvidia.Device, error) {
	if len(ids) == 0 {
		return nil, status.Errorf(codes.InvalidArgument, "request for %s has no device IDs", r.name)
	}
	if r.replicated && r.failOverOne && len(ids) > 1 {
		return nil, status.Errorf(codes.InvalidArgument,
			"request for %d %s devices refused: sharing.timeSlicing.failRequestsGreaterThanOne allows at most 1 replica per container", len(ids), r.name)
	}
	seen := map[string]bool{}
	var devs []*nvidia.Device
	seenDev := map[string]bool{}
	for _, id := range ids {
		a, ok := byID[id]
		if !ok {
			return nil, status.Errorf(codes.InvalidArgument, "unknown device ID %q for resource %s", id, r.name)
		}
		if seen[id] {
			return nil, status.Errorf(codes.InvalidArgument, "device ID %q requested twice", id)
		}
		seen[id] = true
		if !seenDev[a.dev.UUID] {
			seenDev[a.dev.UUID] = true
			devs = append(devs, a.dev)
		}
	}
	return devs, nil
}

// containerResponse tells the NVIDIA container runtime which devices to
// expose, by environment variable or by volume mounts, and optionally
// passes the device nodes themselves.
func containerResponse(devs []*nvidia.Device, s nvidia.Settings, devRoot string) *pluginapi.ContainerAllocateResponse {
	ids := make([]string, len(devs))
	for i, d := range devs {
		ids[i] = d.ID(s.DeviceIDStrategy)
	}
	resp := &pluginapi.ContainerAllocateResponse{Envs: map[string]string{}}
	switch s.DeviceListStrategy {
	case configv1.DeviceListStrategyVolumeMounts:
		resp.Envs[VisibleDevicesEnv] = DeviceListVolumeDir
		for _, id := range ids {
			resp.Mounts = append(resp.Mounts, &pluginapi.Mount{
				HostPath:      "/dev/null",
				ContainerPath: filepath.Join(DeviceListVolumeDir, id),
				ReadOnly:      true,
			})
		}
	default:
		resp.Envs[VisibleDevicesEnv] = strings.Join(ids, ",")
	}
	if s.PassDeviceSpecs {
		resp.Devices = deviceSpecs(devs, devRoot)
	}
	return resp
}

// deviceSpecs lists the control devices and each GPU's /dev/nvidia<minor>.
func deviceSpecs(devs []*nvidia.Device, devRoot string) []*pluginapi.DeviceSpec {
	paths := []string{"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"}
	seen := map[int]bool{}
	for _, d := range devs {
		if !seen[d.Minor] {
			seen[d.Minor] = true
			paths = append(paths, fmt.Sprintf("nvidia%d", d.Minor))
		}
	}
	specs := make([]*pluginapi.DeviceSpec, 0, len(paths))
	for _, p := range paths {
		specs = append(specs, &pluginapi.DeviceSpec{
			ContainerPath: "/dev/" + p,
			HostPath:      filepath.Join(devRoot, p),
			Permissions:   "rw",
		})
	}
	return specs
}
