package plugin

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/nvidia"
)

// fixture is four GPUs: 0-1 and 2-3 NVLink pairs, 0 and 2 on NUMA node 0,
// 1 and 3 on node 1, so NVLink and NUMA disagree.
func fixture(replicas int) (*resourceSpec, map[string]*advertised, [][]bool) {
	nvlink := [][]bool{{false, true, false, false}, {true, false, false, false}, {false, false, false, true}, {false, false, true, false}}
	r := &resourceSpec{name: "nvidia.com/gpu", replicated: replicas > 0}
	for i := 0; i < 4; i++ {
		d := &nvidia.Device{UUID: "GPU-" + string(rune('a'+i)), Index: string(rune('0' + i)), GPUIndex: i, Minor: i, NUMANode: []int{0, 1, 0, 1}[i]}
		if replicas == 0 {
			r.devices = append(r.devices, advertised{id: d.UUID, dev: d, replica: -1})
			continue
		}
		for n := 0; n < replicas; n++ {
			r.devices = append(r.devices, advertised{id: d.UUID + "::" + string(rune('0'+n)), dev: d, replica: n})
		}
	}
	by := map[string]*advertised{}
	for i := range r.devices {
		by[r.devices[i].id] = &r.devices[i]
	}
	return r, by, nvlink
}

func TestPreferred(t *testing.T) {
	all := []string{"GPU-a", "GPU-b", "GPU-c", "GPU-d"}
	testCases := []struct {
		name      string
		replicas  int
		policy    string
		available []string
		must      []string
		size      int
		want      []string
		wantCode  codes.Code
	}{
		{name: "nvlink pair beats numa pair", available: all, size: 2, want: []string{"GPU-a", "GPU-b"}},
		{name: "must-include picks its nvlink peer", available: all, must: []string{"GPU-d"}, size: 2, want: []string{"GPU-d", "GPU-c"}},
		{name: "without the peer, numa decides", available: []string{"GPU-a", "GPU-c", "GPU-d"}, must: []string{"GPU-a"}, size: 2, want: []string{"GPU-a", "GPU-c"}},
		{name: "all", available: all, size: 4, want: all},
		{name: "replicas spread", replicas: 2, available: []string{"GPU-a::0", "GPU-a::1", "GPU-b::0", "GPU-b::1", "GPU-c::0", "GPU-d::1"}, size: 3,
			want: []string{"GPU-a::0", "GPU-b::0", "GPU-c::0"}},
		{name: "replicas spread to least used first", replicas: 2, available: []string{"GPU-a::1", "GPU-b::0", "GPU-b::1"}, size: 1,
			want: []string{"GPU-b::0"}},
		{name: "replicas packed", replicas: 2, policy: "packed", available: []string{"GPU-a::1", "GPU-b::0", "GPU-b::1"}, size: 2,
			want: []string{"GPU-a::1", "GPU-b::0"}},
		{name: "replicas must-include", replicas: 2, available: []string{"GPU-a::0", "GPU-a::1", "GPU-b::0"}, must: []string{"GPU-a::1"}, size: 2,
			want: []string{"GPU-a::1", "GPU-b::0"}},
		{name: "size zero", available: all, size: 0, wantCode: codes.InvalidArgument},
		{name: "size too big", available: all[:1], size: 2, wantCode: codes.InvalidArgument},
		{name: "unknown available", available: []string{"GPU-z"}, size: 1, wantCode: codes.InvalidArgument},
		{name: "must not available", available: all[:2], must: []string{"GPU-c"}, size: 2, wantCode: codes.InvalidArgument},
		{name: "too many must", available: all, must: all[:3], size: 2, wantCode: codes.InvalidArgument},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			r, by, nvlink := fixture(tc.replicas)
			got, err := preferred(r, by, nvlink, tc.policy, tc.available, tc.must, tc.size)
			if tc.wantCode != codes.OK {
				if status.Code(err) != tc.wantCode {
					t.Fatalf("preferred() error = %v, want code %v", err, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("preferred() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContainerResponse(t *testing.T) {
	devs := []*nvidia.Device{{UUID: "GPU-a", Index: "0", Minor: 0}, {UUID: "MIG-b", Index: "1:0", Minor: 1}}
	testCases := []struct {
		name string
		s    nvidia.Settings
		want *pluginapi.ContainerAllocateResponse
	}{
		{name: "envvar uuid", s: nvidia.Settings{DeviceListStrategy: "envvar", DeviceIDStrategy: "uuid"},
			want: &pluginapi.ContainerAllocateResponse{Envs: map[string]string{"NVIDIA_VISIBLE_DEVICES": "GPU-a,MIG-b"}}},
		{name: "envvar index", s: nvidia.Settings{DeviceListStrategy: "envvar", DeviceIDStrategy: "index"},
			want: &pluginapi.ContainerAllocateResponse{Envs: map[string]string{"NVIDIA_VISIBLE_DEVICES": "0,1:0"}}},
		{name: "volume-mounts", s: nvidia.Settings{DeviceListStrategy: "volume-mounts", DeviceIDStrategy: "uuid"},
			want: &pluginapi.ContainerAllocateResponse{
				Envs: map[string]string{"NVIDIA_VISIBLE_DEVICES": "/var/run/nvidia-container-devices"},
				Mounts: []*pluginapi.Mount{
					{ContainerPath: "/var/run/nvidia-container-devices/GPU-a", HostPath: "/dev/null", ReadOnly: true},
					{ContainerPath: "/var/run/nvidia-container-devices/MIG-b", HostPath: "/dev/null", ReadOnly: true},
				}}},
		{name: "device specs", s: nvidia.Settings{DeviceListStrategy: "envvar", DeviceIDStrategy: "uuid", PassDeviceSpecs: true},
			want: &pluginapi.ContainerAllocateResponse{
				Envs: map[string]string{"NVIDIA_VISIBLE_DEVICES": "GPU-a,MIG-b"},
				Devices: []*pluginapi.DeviceSpec{
					{ContainerPath: "/dev/nvidiactl", HostPath: "/host/dev/nvidiactl", Permissions: "rw"},
					{ContainerPath: "/dev/nvidia-uvm", HostPath: "/host/dev/nvidia-uvm", Permissions: "rw"},
					{ContainerPath: "/dev/nvidia-uvm-tools", HostPath: "/host/dev/nvidia-uvm-tools", Permissions: "rw"},
					{ContainerPath: "/dev/nvidia-modeset", HostPath: "/host/dev/nvidia-modeset", Permissions: "rw"},
					{ContainerPath: "/dev/nvidia0", HostPath: "/host/dev/nvidia0", Permissions: "rw"},
					{ContainerPath: "/dev/nvidia1", HostPath: "/host/dev/nvidia1", Permissions: "rw"},
				}}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := containerResponse(devs, tc.s, "/host/dev")
			if diff := cmp.Diff(tc.want.String(), got.String()); diff != "" {
				t.Errorf("containerResponse() (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzAllocateRequest checks request validation never panics, refuses
// with InvalidArgument only, and accepts only known, distinct IDs.
func FuzzAllocateRequest(f *testing.F) {
	f.Add("GPU-a::0,GPU-b::1", true)
	f.Add("GPU-a::0,GPU-a::0", false)
	f.Add("", false)
	f.Add("GPU-z,,GPU-a::1", false)
	f.Fuzz(func(t *testing.T, list string, failOverOne bool) {
		r, by, _ := fixture(2)
		r.failOverOne = failOverOne
		var ids []string
		if list != "" {
			ids = strings.Split(list, ",")
		}
		devs, err := validateRequest(r, by, ids)
		if err != nil {
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("error %v is not InvalidArgument", err)
			}
			return
		}
		if len(ids) == 0 || (failOverOne && len(ids) > 1) {
			t.Fatalf("accepted %q", ids)
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if by[id] == nil || seen[id] {
				t.Fatalf("accepted unknown or duplicate ID %q", id)
			}
			seen[id] = true
		}
		if len(devs) == 0 || len(devs) > len(ids) {
			t.Fatalf("got %d devices for %d IDs", len(devs), len(ids))
		}
	})
}
