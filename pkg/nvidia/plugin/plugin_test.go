package plugin_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
	"github.com/accelstack/accelstack/pkg/nvidia/plugin"
	"github.com/accelstack/accelstack/test/kubelet"
	"github.com/accelstack/accelstack/test/plugintest"
	"github.com/accelstack/accelstack/test/testutil"
)

// testEnv is a running plugin in front of a fake kubelet.
type testEnv struct {
	kubelet *kubelet.Kubelet
	vendor  *plugin.Vendor
	events  chan deviceplugin.Event
	stop    func()
}

func startPlugin(t *testing.T, o plugin.Options) *testEnv {
	t.Helper()
	v, err := plugin.NewVendor(o)
	if err != nil {
		t.Fatalf("NewVendor: %v", err)
	}
	events := make(chan deviceplugin.Event, 1024)
	p := plugintest.Start(t, deviceplugin.Config{Vendor: accelerator.VendorNVIDIA, Backend: o.Backend,
		ConfigFile: o.ConfigFile, FailOnInitError: true}, v, func(e deviceplugin.Event) { events <- e })
	return &testEnv{kubelet: p.Kubelet, vendor: v, events: events, stop: p.Stop}
}

func simOptions(t *testing.T, profile string) plugin.Options {
	o := plugin.DefaultOptions()
	o.Backend = "simulated"
	o.Simulate = profile
	o.HealthWait = 20 * time.Millisecond
	return o
}

func countByResource(t *testing.T, ctx context.Context, k *kubelet.Kubelet, want map[string]int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for r := range want {
		p, err := k.WaitPlugin(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		got[r] = len(p.Devices())
	}
	return got
}

func TestResourcesPerProfileAndStrategy(t *testing.T) {
	sharing := func(body string) string {
		return "version: v1\nsharing:\n  timeSlicing:\n" + body
	}
	testCases := []struct {
		name     string
		profile  string
		strategy string
		config   string
		want     map[string]int
		wantErr  string
	}{
		{name: "a100 none", profile: "dgxa100", strategy: "none", want: map[string]int{"nvidia.com/gpu": 8}},
		{name: "a100 single without MIG", profile: "dgxa100", strategy: "single", want: map[string]int{"nvidia.com/gpu": 8}},
		{name: "a100 mixed without MIG", profile: "dgxa100", strategy: "mixed", want: map[string]int{"nvidia.com/gpu": 8}},
		{name: "h100 none", profile: "dgxh100", strategy: "none", want: map[string]int{"nvidia.com/gpu": 8}},
		{name: "h200 none", profile: "dgxh200", strategy: "none", want: map[string]int{"nvidia.com/gpu": 8}},
		{name: "b200 none", profile: "dgxb200", strategy: "none", want: map[string]int{"nvidia.com/gpu": 8}},
		{name: "mig-mixed none", profile: "dgxa100-mig-mixed", strategy: "none", want: map[string]int{"nvidia.com/gpu": 8}},
		{name: "mig-mixed mixed", profile: "dgxa100-mig-mixed", strategy: "mixed", want: map[string]int{
			"nvidia.com/gpu": 2, "nvidia.com/mig-1g.5gb": 13, "nvidia.com/mig-2g.10gb": 8, "nvidia.com/mig-3g.20gb": 4}},
		{name: "h100 mig-mixed mixed", profile: "dgxh100-mig-mixed", strategy: "mixed", want: map[string]int{
			"nvidia.com/gpu": 2, "nvidia.com/mig-1g.10gb": 13, "nvidia.com/mig-2g.20gb": 8, "nvidia.com/mig-3g.40gb": 4}},
		{name: "mig-mixed single refused", profile: "dgxa100-mig-mixed", strategy: "single", wantErr: "mig strategy single needs a uniform node"},
		{name: "mig-single single", profile: "dgxa100-mig-single", strategy: "single", want: map[string]int{"nvidia.com/gpu": 56}},
		{name: "mig-single mixed", profile: "dgxa100-mig-single", strategy: "mixed", want: map[string]int{"nvidia.com/mig-1g.5gb": 56}},
		{name: "a100 time-sliced renamed", profile: "dgxa100", strategy: "none",
			config: sharing("    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"),
			want:   map[string]int{"nvidia.com/gpu.shared": 32}},
		{name: "h100 time-sliced in place", profile: "dgxh100", strategy: "none",
			config: sharing("    resources:\n    - name: nvidia.com/gpu\n      replicas: 10\n"),
			want:   map[string]int{"nvidia.com/gpu": 80}},
		{name: "h200 time-sliced two devices", profile: "dgxh200", strategy: "none",
			config: sharing("    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n      devices: [0, 1]\n"),
			want:   map[string]int{"nvidia.com/gpu": 6, "nvidia.com/gpu.shared": 4}},
		{name: "mig-mixed time-sliced slices", profile: "dgxa100-mig-mixed", strategy: "mixed",
			config: sharing("    renameByDefault: true\n    resources:\n    - name: nvidia.com/mig-1g.5gb\n      replicas: 2\n"),
			want:   map[string]int{"nvidia.com/gpu": 2, "nvidia.com/mig-1g.5gb.shared": 26, "nvidia.com/mig-2g.10gb": 8, "nvidia.com/mig-3g.20gb": 4}},
		{name: "mig-single single time-sliced", profile: "dgxa100-mig-single", strategy: "single",
			config: sharing("    resources:\n    - name: nvidia.com/gpu\n      rename: example.com/slice\n      replicas: 2\n"),
			want:   map[string]int{"example.com/slice": 112}},
		{name: "rename onto a resource of the node refused", profile: "dgxa100-mig-mixed", strategy: "mixed",
			config:  sharing("    resources:\n    - name: nvidia.com/mig-1g.5gb\n      rename: nvidia.com/gpu\n      replicas: 2\n"),
			wantErr: "replicas of nvidia.com/mig-1g.5gb would be advertised as nvidia.com/gpu, a resource of this node"},
		{name: "too many device IDs refused", profile: "dgxa100-mig-single", strategy: "single",
			config:  sharing("    resources:\n    - name: nvidia.com/gpu\n      replicas: 128\n"),
			wantErr: "nvidia.com/gpu would advertise 7168 device IDs, more than 4096"},
		{name: "selector of a missing device refused", profile: "dgxa100", strategy: "none",
			config:  sharing("    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n      devices: [9]\n"),
			wantErr: `devices: no nvidia.com/gpu device "9"`},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testutil.Context(t)
			o := simOptions(t, tc.profile)
			o.MigStrategy = tc.strategy
			if tc.config != "" {
				o.ConfigFile = filepath.Join(t.TempDir(), "config.yaml")
				if err := os.WriteFile(o.ConfigFile, []byte(tc.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.wantErr != "" {
				v, err := plugin.NewVendor(o)
				if err == nil {
					_, err = v.Start(ctx)
					_ = v.Stop()
				}
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Start error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			env := startPlugin(t, o)
			got := countByResource(t, ctx, env.kubelet, tc.want)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("advertised devices per resource (-want +got):\n%s", diff)
			}
			resources := env.kubelet.Resources()
			sort.Strings(resources)
			if len(resources) != len(tc.want) {
				t.Errorf("registered resources = %v, want exactly %d", resources, len(tc.want))
			}
			for r := range tc.want {
				sock := filepath.Join(env.kubelet.Dir(), deviceplugin.SocketName(r))
				fi, err := os.Stat(sock)
				if err != nil {
					t.Fatalf("plugin socket: %v", err)
				}
				if perm := fi.Mode().Perm(); perm&0o007 != 0 {
					t.Errorf("socket %s mode %v is world-accessible", sock, perm)
				}
			}
		})
	}
}

func ids(devs []*pluginapi.Device) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = d.ID
	}
	return out
}

func TestAllocateOverSocket(t *testing.T) {
	ctx := testutil.Context(t)
	o := simOptions(t, "dgxa100")
	o.ConfigFile = filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(o.ConfigFile, []byte(`version: v1
sharing:
  timeSlicing:
    renameByDefault: true
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 4
      devices: [0, 1, 4, 5]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := startPlugin(t, o)
	gpu, err := env.kubelet.WaitPlugin(ctx, "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	shared, err := env.kubelet.WaitPlugin(ctx, "nvidia.com/gpu.shared")
	if err != nil {
		t.Fatal(err)
	}
	whole := ids(gpu.Devices())
	replicas := ids(shared.Devices())
	if !strings.Contains(replicas[0], "::") {
		t.Fatalf("replica ID %q lacks ::", replicas[0])
	}

	resp, err := gpu.Allocate(ctx, whole[:2])
	if err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	want := strings.Join(whole[:2], ",")
	if got := resp.ContainerResponses[0].Envs["NVIDIA_VISIBLE_DEVICES"]; got != want {
		t.Errorf("NVIDIA_VISIBLE_DEVICES = %q, want %q", got, want)
	}
	resp, err = shared.Allocate(ctx, replicas[:1])
	if err != nil {
		t.Fatalf("Allocate replica: %v", err)
	}
	if got, want := resp.ContainerResponses[0].Envs["NVIDIA_VISIBLE_DEVICES"], strings.Split(replicas[0], "::")[0]; got != want {
		t.Errorf("replica NVIDIA_VISIBLE_DEVICES = %q, want %q", got, want)
	}

	bad := []struct {
		name    string
		plugin  *kubelet.Plugin
		ids     [][]string
		wantMsg string
	}{
		{"unknown id", gpu, [][]string{{"GPU-nope"}}, `unknown device ID "GPU-nope"`},
		{"replica id on whole resource", gpu, [][]string{{replicas[0]}}, "unknown device ID"},
		{"duplicate", gpu, [][]string{{whole[0], whole[0]}}, "requested twice"},
		{"empty container request", gpu, [][]string{{}}, "has no device IDs"},
		{"no container requests", gpu, nil, "no container requests"},
		{"more than one replica", shared, [][]string{replicas[:2]}, "failRequestsGreaterThanOne"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.plugin.Allocate(ctx, tc.ids...)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("Allocate error = %v, want InvalidArgument containing %q", err, tc.wantMsg)
			}
		})
	}

	opts, err := gpu.Client().GetDevicePluginOptions(ctx, &pluginapi.Empty{})
	if err != nil || !opts.GetPreferredAllocationAvailable {
		t.Errorf("GetDevicePluginOptions = %v, %v; want preferred allocation available", opts, err)
	}
	if _, err := gpu.Client().PreStartContainer(ctx, &pluginapi.PreStartContainerRequest{DevicesIds: whole[:1]}); err != nil {
		t.Errorf("PreStartContainer: %v", err)
	}

	// Replicas spread: 4 replicas out of 4 GPUs x 4 land on 4 different GPUs.
	got, err := shared.GetPreferredAllocation(ctx, replicas, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	parents := map[string]bool{}
	for _, id := range got {
		parents[strings.Split(id, "::")[0]] = true
	}
	if len(parents) != 4 {
		t.Errorf("preferred replicas %v use %d GPUs, want 4", got, len(parents))
	}
	// Whole GPUs 2, 3, 6, 7: a pair with must-include GPU 6 stays on its NUMA node.
	got, err = gpu.GetPreferredAllocation(ctx, whole, whole[2:3], 2)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != whole[2] || got[1] != whole[3] {
		t.Errorf("preferred %v, want must-include %s then its NUMA neighbour %s", got, whole[2], whole[3])
	}
	numa := map[string]int64{}
	for _, d := range gpu.Devices() {
		numa[d.ID] = d.Topology.Nodes[0].ID
	}
	if numa[got[0]] != numa[got[1]] {
		t.Errorf("preferred %v spans NUMA nodes %d and %d", got, numa[got[0]], numa[got[1]])
	}
	if _, err := gpu.GetPreferredAllocation(ctx, whole, []string{"GPU-nope"}, 1); status.Code(err) != codes.InvalidArgument {
		t.Errorf("GetPreferredAllocation with unknown must-include = %v, want InvalidArgument", err)
	}
}

func health(devs []*pluginapi.Device, id string) string {
	for _, d := range devs {
		if d.ID == id {
			return d.Health
		}
	}
	return "missing"
}

func TestXIDUnhealthyThenRecovery(t *testing.T) {
	ctx := testutil.Context(t)
	o := simOptions(t, "dgxa100-mig-mixed")
	o.MigStrategy = "mixed"
	o.HealthQuietPeriod = 100 * time.Millisecond
	env := startPlugin(t, o)
	sim := env.vendor.Simulator()
	gpu, err := env.kubelet.WaitPlugin(ctx, "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	mig, err := env.kubelet.WaitPlugin(ctx, "nvidia.com/mig-3g.20gb")
	if err != nil {
		t.Fatal(err)
	}
	whole := ids(gpu.Devices())
	// With health checks on, the GPUs are watched (the converse of
	// TestHealthChecksDisabled).
	if n, err := sim.Subscribers(whole[1]); err != nil || n == 0 {
		t.Fatalf("event sets watching %s = %d (%v), want at least 1", whole[1], n, err)
	}

	// An ignored XID (13) on GPU 6, then a critical one (79) on GPU 7: when
	// GPU 7 turns unhealthy, GPU 6 must still be healthy.
	if err := sim.InjectXID(whole[0], 13); err != nil {
		t.Fatal(err)
	}
	if err := sim.SetLost(whole[1], true); err != nil {
		t.Fatal(err)
	}
	if err := sim.InjectXID(whole[1], 79); err != nil {
		t.Fatal(err)
	}
	devs, _, err := gpu.WaitDevices(ctx, func(d []*pluginapi.Device) bool { return health(d, whole[1]) == pluginapi.Unhealthy })
	if err != nil {
		t.Fatal(err)
	}
	if h := health(devs, whole[0]); h != pluginapi.Healthy {
		t.Errorf("GPU with ignored XID 13 is %s, want Healthy", h)
	}
	// A MIG event (GPU 0, instance 0: its 3g.20gb slice) marks only that slice.
	migID := "0:0"
	if err := sim.InjectXID(migID, 48); err != nil {
		t.Fatal(err)
	}
	// The slice heals after the quiet period: look through every list sent,
	// not only the latest, so a slow test cannot miss the unhealthy one.
	migDevs, err := mig.WaitSeen(ctx, func(d []*pluginapi.Device) bool {
		n := 0
		for _, x := range d {
			if x.Health == pluginapi.Unhealthy {
				n++
			}
		}
		return n == 1
	})
	if err != nil {
		t.Fatal(err)
	}
	if migDevs[0].Health != pluginapi.Unhealthy {
		t.Errorf("first 3g.20gb slice (GPU 0) is %s, want Unhealthy", migDevs[0].Health)
	}
	// The MIG slice recovers after the quiet period; GPU 7 does not while
	// its NVML check fails, then does once it passes.
	if _, _, err := mig.WaitDevices(ctx, func(d []*pluginapi.Device) bool { return d[0].Health == pluginapi.Healthy }); err != nil {
		t.Fatal(err)
	}
	if h := health(gpu.Devices(), whole[1]); h != pluginapi.Unhealthy {
		t.Errorf("GPU failing its NVML check is %s, want Unhealthy", h)
	}
	if err := sim.SetLost(whole[1], false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := gpu.WaitDevices(ctx, func(d []*pluginapi.Device) bool { return health(d, whole[1]) == pluginapi.Healthy }); err != nil {
		t.Fatal(err)
	}
	events, recovered := env.vendor.HealthCounts()
	if events != 2 || recovered != 2 {
		t.Errorf("health counts = %d events, %d recoveries; want 2 and 2", events, recovered)
	}
}

func TestHealthChecksDisabled(t *testing.T) {
	ctx := testutil.Context(t)
	o := simOptions(t, "dgxh100")
	o.DisableHealthChecks = "all"
	env := startPlugin(t, o)
	gpu, err := env.kubelet.WaitPlugin(ctx, "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	// No event set is registered, so an XID reaches nobody.
	if n, err := env.vendor.Simulator().Subscribers("0"); err != nil || n != 0 {
		t.Errorf("event sets watching GPU 0 = %d (%v) with health checks disabled, want 0", n, err)
	}
	if err := env.vendor.Simulator().InjectXID("0", 79); err != nil {
		t.Fatal(err)
	}
	if events, _ := env.vendor.HealthCounts(); events != 0 {
		t.Errorf("critical events = %d with health checks disabled, want 0", events)
	}
	if h := health(gpu.Devices(), ids(gpu.Devices())[0]); h != pluginapi.Healthy {
		t.Errorf("GPU 0 is %s, want Healthy", h)
	}
}

func socketsIn(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func TestKubeletRestartRepeated(t *testing.T) {
	ctx := testutil.Context(t)
	o := simOptions(t, "dgxa100-mig-mixed")
	o.MigStrategy = "mixed"
	env := startPlugin(t, o)
	resources := []string{"nvidia.com/gpu", "nvidia.com/mig-1g.5gb", "nvidia.com/mig-2g.10gb", "nvidia.com/mig-3g.20gb"}
	for _, r := range resources {
		if _, err := env.kubelet.WaitPlugin(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"kubelet.sock", "nvidia-gpu.sock", "nvidia-mig-1g.5gb.sock", "nvidia-mig-2g.10gb.sock", "nvidia-mig-3g.20gb.sock"}
	if diff := cmp.Diff(want, socketsIn(t, env.kubelet.Dir())); diff != "" {
		t.Fatalf("sockets before restarts (-want +got):\n%s", diff)
	}
	runtime.GC()
	baseline := runtime.NumGoroutine()
	for i := 0; i < 50; i++ {
		if err := env.kubelet.Restart(); err != nil {
			t.Fatal(err)
		}
		for _, r := range resources {
			p, err := env.kubelet.WaitPlugin(ctx, r)
			if err != nil {
				t.Fatalf("restart %d: %v", i, err)
			}
			if len(p.Devices()) == 0 {
				t.Fatalf("restart %d: %s advertises no devices", i, r)
			}
		}
		if diff := cmp.Diff(want, socketsIn(t, env.kubelet.Dir())); diff != "" {
			t.Fatalf("sockets after restart %d (-want +got):\n%s", i, diff)
		}
	}
	// Goroutines of closed connections wind down asynchronously; wait for
	// the count to come back rather than sample it once.
	settled := false
	for i := 0; i < 200 && !settled; i++ {
		runtime.GC()
		settled = runtime.NumGoroutine() <= baseline+2
		if !settled {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !settled {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Errorf("goroutines grew from %d to %d after 50 restarts:\n%s", baseline, runtime.NumGoroutine(), buf[:n])
	}
	env.stop()
	if diff := cmp.Diff([]string(nil), socketsIn(t, env.kubelet.Dir())); diff != "" {
		t.Errorf("sockets left after shutdown (-want +got):\n%s", diff)
	}
}

func waitReload(t *testing.T, ctx context.Context, env *testEnv) deviceplugin.Event {
	t.Helper()
	for {
		select {
		case e := <-env.events:
			if e.Kind == deviceplugin.EventReloaded {
				return e
			}
		case <-ctx.Done():
			t.Fatal("no reload happened")
		}
	}
}

func TestConfigReload(t *testing.T) {
	ctx := testutil.Context(t)
	o := simOptions(t, "dgxa100")
	dir := t.TempDir()
	o.ConfigFile = filepath.Join(dir, "config.yaml")
	write := func(s string) {
		t.Helper()
		tmp := o.ConfigFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, o.ConfigFile); err != nil {
			t.Fatal(err)
		}
	}
	write("version: v1\n")
	env := startPlugin(t, o)
	if _, err := env.kubelet.WaitPlugin(ctx, "nvidia.com/gpu"); err != nil {
		t.Fatal(err)
	}
	// Good: time-slicing appears as nvidia.com/gpu.shared.
	write("version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 3\n")
	if e := waitReload(t, ctx, env); e.Err != nil {
		t.Fatalf("good reload rejected: %v", e.Err)
	}
	p, err := env.kubelet.WaitPlugin(ctx, "nvidia.com/gpu.shared")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Devices()); n != 24 {
		t.Errorf("gpu.shared devices = %d, want 24", n)
	}
	before := len(env.kubelet.Registrations())
	// Bad: refused, naming the field; the last good config stays served.
	for _, bad := range []struct{ body, wantErr string }{
		{"version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 0\n", "replicas: must be between 1 and 128"},
		{"version: v1\nflags:\n  migStrategy: sometimes\n", "flags.migStrategy"},
		{"version: v1\nbogus: 1\n", `unknown field "bogus"`},
		{"version: [\n", "yaml"},
	} {
		write(bad.body)
		e := waitReload(t, ctx, env)
		if e.Err == nil || !strings.Contains(e.Err.Error(), bad.wantErr) {
			t.Errorf("reload of bad file = %v, want error containing %q", e.Err, bad.wantErr)
		}
	}
	if after := len(env.kubelet.Registrations()); after != before {
		t.Errorf("registrations went from %d to %d after bad reloads, want unchanged", before, after)
	}
	if got := env.vendor.Settings().TimeSlicing; got == nil || got.Resources[0].Replicas != 3 {
		t.Errorf("settings after bad reloads = %+v, want the last good time-slicing", got)
	}
}
