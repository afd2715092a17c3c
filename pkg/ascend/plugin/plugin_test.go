package plugin_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/ascend"
	"github.com/accelstack/accelstack/pkg/ascend/plugin"
	"github.com/accelstack/accelstack/pkg/ascend/simulator"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
	"github.com/accelstack/accelstack/test/kubelet"
	"github.com/accelstack/accelstack/test/plugintest"
	"github.com/accelstack/accelstack/test/testutil"
)

// startPlugin runs the Ascend vendor through pkg/deviceplugin in front of
// a fake kubelet until the test ends.
func startPlugin(t *testing.T, o plugin.Options) (*kubelet.Kubelet, *plugin.Vendor) {
	t.Helper()
	v, err := plugin.NewVendor(o)
	if err != nil {
		t.Fatalf("NewVendor: %v", err)
	}
	p := plugintest.Start(t, deviceplugin.Config{Vendor: accelerator.VendorAscend, Backend: o.Backend, FailOnInitError: true}, v, nil)
	return p.Kubelet, v
}

func simulated(profile string) plugin.Options {
	o := plugin.DefaultOptions()
	o.Backend, o.Simulate = accelerator.BackendSimulated, profile
	return o
}

type dev struct{ ID, Health string }

func devs(in []*pluginapi.Device) []dev {
	out := make([]dev, len(in))
	for i, d := range in {
		out[i] = dev{d.ID, d.Health}
	}
	return out
}

func TestAdvertisedResources(t *testing.T) {
	tests := []struct {
		name     string
		profile  string
		resource string
		want     []dev
	}{
		{"910B one chip per card", simulator.ProfileAscend910B8, accelerator.Ascend910, healthyIDs("Ascend910", 8)},
		{"910B two chips per card", simulator.ProfileAscend910B8Dual, accelerator.Ascend910, healthyIDs("Ascend910", 8)},
		{"310P", simulator.ProfileAscend310P4, accelerator.Ascend310P, healthyIDs("Ascend310P", 4)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, _ := startPlugin(t, simulated(tc.profile))
			p, err := k.WaitPlugin(testutil.Context(t), tc.resource)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, devs(p.Devices())); diff != "" {
				t.Errorf("ListAndWatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{tc.resource}, k.Resources()); diff != "" {
				t.Errorf("registered resources (-want +got):\n%s", diff)
			}
		})
	}
}

func healthyIDs(kind string, n int) []dev {
	var out []dev
	for i := 0; i < n; i++ {
		out = append(out, dev{kind + "-" + string(rune('0'+i)), pluginapi.Healthy})
	}
	return out
}

func TestAllocate(t *testing.T) {
	docker := simulated(simulator.ProfileAscend910B8Dual)
	specs := docker
	specs.UseAscendDocker = false
	spec := func(name string) *pluginapi.DeviceSpec {
		return &pluginapi.DeviceSpec{HostPath: "/dev/" + name, ContainerPath: "/dev/" + name, Permissions: "rw"}
	}
	tests := []struct {
		name     string
		opts     plugin.Options
		ids      []string
		want     *pluginapi.ContainerAllocateResponse
		wantCode codes.Code
	}{
		{"ascend docker runtime gets physical IDs", docker, []string{"Ascend910-0", "Ascend910-3"},
			&pluginapi.ContainerAllocateResponse{Envs: map[string]string{"ASCEND_VISIBLE_DEVICES": "0,3"}}, codes.OK},
		{"device specs without ascend docker", specs, []string{"Ascend910-5"},
			&pluginapi.ContainerAllocateResponse{Devices: []*pluginapi.DeviceSpec{
				spec("davinci5"), spec("davinci_manager"), spec("devmm_svm"), spec("hisi_hdc")}}, codes.OK},
		{"unknown chip", docker, []string{"Ascend910-9"}, nil, codes.InvalidArgument},
		{"duplicate chip", docker, []string{"Ascend910-1", "Ascend910-1"}, nil, codes.InvalidArgument},
		{"no chips", docker, []string{}, nil, codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, _ := startPlugin(t, tc.opts)
			ctx := testutil.Context(t)
			p, err := k.WaitPlugin(ctx, accelerator.Ascend910)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Allocate(ctx, tc.ids)
			if code := status.Code(err); code != tc.wantCode {
				t.Fatalf("Allocate: code %v (%v), want %v", code, err, tc.wantCode)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, resp.ContainerResponses[0], cmp.Comparer(func(a, b *pluginapi.ContainerAllocateResponse) bool {
				return cmp.Equal(a.Envs, b.Envs) && cmp.Equal(len(a.Devices), len(b.Devices)) && devicesEqual(a.Devices, b.Devices)
			})); diff != "" {
				t.Errorf("Allocate (-want +got):\n%s", diff)
			}
		})
	}
}

func devicesEqual(a, b []*pluginapi.DeviceSpec) bool {
	for i := range a {
		if a[i].HostPath != b[i].HostPath || a[i].ContainerPath != b[i].ContainerPath || a[i].Permissions != b[i].Permissions {
			return false
		}
	}
	return true
}

// TestFaultAndRecovery injects a chip fault and a RoCE link failure into
// the simulator and waits for ListAndWatch to mark the chips Unhealthy,
// for Allocate to refuse them, and for both to come back on recovery.
func TestFaultAndRecovery(t *testing.T) {
	o := simulated(simulator.ProfileAscend910B8)
	o.HealthPeriod = time.Hour // only fault events trigger checks
	k, v := startPlugin(t, o)
	ctx := testutil.Context(t)
	p, err := k.WaitPlugin(ctx, accelerator.Ascend910)
	if err != nil {
		t.Fatal(err)
	}
	healthOf := func(ds []*pluginapi.Device) map[string]string {
		out := map[string]string{}
		for _, d := range ds {
			out[d.ID] = d.Health
		}
		return out
	}
	waitHealth := func(want map[string]string) {
		t.Helper()
		_, _, err := p.WaitDevices(ctx, func(ds []*pluginapi.Device) bool {
			h := healthOf(ds)
			for id, s := range want {
				if h[id] != s {
					return false
				}
			}
			return true
		})
		if err != nil {
			t.Fatalf("waiting for %v: %v (have %v)", want, err, healthOf(p.Devices()))
		}
	}
	sim := v.Simulator()
	if err := sim.SetHealth(2, ascend.HealthCritical, 80818692); err != nil {
		t.Fatal(err)
	}
	if err := sim.SetNetworkHealth(6, ascend.NetworkDown); err != nil {
		t.Fatal(err)
	}
	waitHealth(map[string]string{"Ascend910-2": pluginapi.Unhealthy, "Ascend910-6": pluginapi.Unhealthy, "Ascend910-0": pluginapi.Healthy})
	if diff := cmp.Diff([]uint32{80818692}, v.Health(2).ErrorCodes); diff != "" {
		t.Errorf("error codes (-want +got):\n%s", diff)
	}
	for _, id := range []string{"Ascend910-2", "Ascend910-6"} {
		if _, err := p.Allocate(ctx, []string{id}); status.Code(err) != codes.FailedPrecondition {
			t.Errorf("Allocate of unhealthy %s: %v, want FailedPrecondition", id, err)
		}
	}
	// A minor alarm leaves the chip usable.
	if err := sim.SetHealth(2, ascend.HealthMinor); err != nil {
		t.Fatal(err)
	}
	if err := sim.SetNetworkHealth(6, ascend.NetworkOK); err != nil {
		t.Fatal(err)
	}
	waitHealth(map[string]string{"Ascend910-2": pluginapi.Healthy, "Ascend910-6": pluginapi.Healthy})
	if _, err := p.Allocate(ctx, []string{"Ascend910-2", "Ascend910-6"}); err != nil {
		t.Errorf("Allocate after recovery: %v", err)
	}
}

// TestUnhealthyAtStart checks that a chip faulty before the plugin starts
// is never advertised healthy, and comes back once it recovers.
func TestUnhealthyAtStart(t *testing.T) {
	o := simulated(simulator.ProfileAscend910B8)
	sim, err := simulator.New(o.Simulate)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.SetHealth(4, ascend.HealthMajor); err != nil {
		t.Fatal(err)
	}
	o.Simulator = sim
	k, _ := startPlugin(t, o)
	ctx := testutil.Context(t)
	p, err := k.WaitPlugin(ctx, accelerator.Ascend910)
	if err != nil {
		t.Fatal(err)
	}
	if h := devs(p.Devices())[4]; h != (dev{"Ascend910-4", pluginapi.Unhealthy}) {
		t.Errorf("first device list has %v, want Ascend910-4 Unhealthy", h)
	}
	if err := sim.SetHealth(4, ascend.HealthOK); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.WaitDevices(ctx, func(ds []*pluginapi.Device) bool { return ds[4].Health == pluginapi.Healthy }); err != nil {
		t.Fatalf("waiting for recovery: %v", err)
	}
}

// fakePicker picks fixed device IDs through resolve.
type fakePicker struct {
	ids []string

	mu            sync.Mutex
	started       int
	stopped       int
	gotResource   string
	gotKubeletIDs []string
}

func (f *fakePicker) Start(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started++
	return nil
}

func (f *fakePicker) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped++
}

func (f *fakePicker) PickChips(_ context.Context, resource string, kubeletIDs []string, resolve func([]string) ([]ascend.Chip, error)) ([]ascend.Chip, error) {
	f.mu.Lock()
	f.gotResource, f.gotKubeletIDs = resource, kubeletIDs
	f.mu.Unlock()
	return resolve(f.ids)
}

func TestAllocateWithChipPicker(t *testing.T) {
	tests := []struct {
		name     string
		picked   []string
		wantEnv  string
		wantCode codes.Code
	}{
		{"picked chips replace the kubelet's", []string{"Ascend910-2", "Ascend910-6"}, "2,6", codes.OK},
		{"picked chip unknown", []string{"Ascend910-12"}, "", codes.InvalidArgument},
		{"nothing picked", nil, "", codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakePicker{ids: tc.picked}
			o := simulated(simulator.ProfileAscend910B8)
			o.Picker = f
			k, _ := startPlugin(t, o)
			ctx := testutil.Context(t)
			p, err := k.WaitPlugin(ctx, accelerator.Ascend910)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Allocate(ctx, []string{"Ascend910-0", "Ascend910-1"})
			if code := status.Code(err); code != tc.wantCode {
				t.Fatalf("Allocate: code %v (%v), want %v", code, err, tc.wantCode)
			}
			f.mu.Lock()
			got := []any{f.started, f.gotResource, f.gotKubeletIDs}
			f.mu.Unlock()
			if diff := cmp.Diff([]any{1, accelerator.Ascend910, []string{"Ascend910-0", "Ascend910-1"}}, got); diff != "" {
				t.Errorf("picker starts and call (-want +got):\n%s", diff)
			}
			if err == nil {
				if env := resp.ContainerResponses[0].Envs[plugin.EnvVisibleDevices]; env != tc.wantEnv {
					t.Errorf("%s = %q, want %q", plugin.EnvVisibleDevices, env, tc.wantEnv)
				}
			}
		})
	}
}
