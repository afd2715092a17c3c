package nodeagent

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
	"github.com/accelstack/accelstack/pkg/nvidia"
	"github.com/accelstack/accelstack/pkg/nvidia/plugin"
	"github.com/accelstack/accelstack/pkg/nvidia/simulator"
	"github.com/accelstack/accelstack/test/kubelet"
	"github.com/accelstack/accelstack/test/plugintest"
)

// agentUnhealthy collects once and returns the IDs of unhealthy devices.
func agentUnhealthy(c *Collector) []string {
	var out []string
	for _, d := range c.CollectOnce(context.Background()).Devices {
		if !d.Healthy {
			out = append(out, d.ID)
		}
	}
	sort.Strings(out)
	return out
}

// pluginUnhealthy returns the IDs the plugin advertises as Unhealthy.
func pluginUnhealthy(plugins []*kubelet.Plugin) []string {
	var out []string
	for _, p := range plugins {
		for _, d := range p.Devices() {
			if d.Health == pluginapi.Unhealthy {
				out = append(out, d.ID)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestHealthAgreesWithDevicePlugin runs the device plugin and the agent on
// one simulated MIG-mixed machine and injects XIDs: after each step the
// devices the plugin advertises Unhealthy are exactly those with
// accelstack_gpu_healthy 0: an ignored XID changes nothing, a critical one
// marks the GPU, a MIG event only its slice; each heals after the quiet
// period once its NVML check passes again.
func TestHealthAgreesWithDevicePlugin(t *testing.T) {
	ctx, cancel := context.WithTimeout(klog.NewContext(context.Background(), klog.Background()), 60*time.Second)
	defer cancel()
	sim, err := simulator.New("dgxa100-mig-mixed")
	if err != nil {
		t.Fatal(err)
	}
	const quiet = 300 * time.Millisecond

	o := plugin.DefaultOptions()
	o.Backend, o.Simulator, o.MigStrategy = "simulated", sim, "mixed"
	o.HealthQuietPeriod, o.HealthWait = quiet, 20*time.Millisecond
	v, err := plugin.NewVendor(o)
	if err != nil {
		t.Fatal(err)
	}
	k := plugintest.Start(t, deviceplugin.Config{Vendor: accelerator.VendorNVIDIA, Backend: o.Backend, FailOnInitError: true}, v, nil).Kubelet
	var plugins []*kubelet.Plugin
	for _, r := range []string{"nvidia.com/gpu", "nvidia.com/mig-1g.5gb", "nvidia.com/mig-2g.10gb", "nvidia.com/mig-3g.20gb"} {
		p, err := k.WaitPlugin(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		plugins = append(plugins, p)
	}

	ao := nvidia.DefaultOptions()
	ao.Backend, ao.HealthQuietPeriod = "simulated", quiet
	src, err := NewNVIDIASource(ctx, ao, sim)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	c := NewCollector("n", []Source{src}, nil, nil)
	if got := agentUnhealthy(c); len(got) != 0 { // also starts XID watching
		t.Fatalf("agent starts with unhealthy devices %v", got)
	}

	// agree waits until the plugin and the agent both report want.
	agree := func(step string, want []string) {
		t.Helper()
		var gotPlugin, gotAgent []string
		for ctx.Err() == nil {
			gotPlugin, gotAgent = pluginUnhealthy(plugins), agentUnhealthy(c)
			if cmp.Equal(gotPlugin, want) && cmp.Equal(gotAgent, want) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%s: plugin unhealthy %v, agent unhealthy %v, want %v", step, gotPlugin, gotAgent, want)
	}

	machine, err := nvidia.Discover(sim)
	if err != nil {
		t.Fatal(err)
	}
	gpu6, gpu7 := machine.GPUs[6].UUID, machine.GPUs[7].UUID
	slice := machine.GPUs[0].MIGDevices[0].UUID // index 0:0
	if err := sim.InjectXID(gpu6, 13); err != nil {
		t.Fatal(err)
	}
	if err := sim.SetLost(gpu7, true); err != nil {
		t.Fatal(err)
	}
	if err := sim.InjectXID(gpu7, 79); err != nil {
		t.Fatal(err)
	}
	// The slice fails its NVML check too, so it cannot heal before both
	// sides have been seen to mark it, however slow the test runs.
	if err := sim.SetLost("0:0", true); err != nil {
		t.Fatal(err)
	}
	if err := sim.InjectXID("0:0", 48); err != nil {
		t.Fatal(err)
	}
	want := []string{gpu7, slice}
	sort.Strings(want)
	agree("after XIDs 13, 79 and a MIG 48", want)
	if err := sim.SetLost("0:0", false); err != nil {
		t.Fatal(err)
	}
	agree("after the quiet period, GPU 7 still lost", []string{gpu7})
	if err := sim.SetLost(gpu7, false); err != nil {
		t.Fatal(err)
	}
	agree("after GPU 7 answers again", nil)
}

// TestHealthChecksEnvironment checks that the agent applies
// DP_DISABLE_HEALTHCHECKS and DP_ENABLE_HEALTHCHECKS as the plugin does,
// and that an ignored XID after a critical one does not heal the GPU.
func TestHealthChecksEnvironment(t *testing.T) {
	testCases := []struct {
		name            string
		disable, enable string
		xids            []uint64
		wantHealthy     bool
	}{
		{name: "default: 79 is critical", xids: []uint64{79}, wantHealthy: false},
		{name: "79 then ignored 13 stays unhealthy", xids: []uint64{79, 13}, wantHealthy: false},
		{name: "disable 79", disable: "79", xids: []uint64{79}, wantHealthy: true},
		{name: "disable all", disable: "all", xids: []uint64{79}, wantHealthy: true},
		{name: "enable 13", enable: "13", xids: []uint64{13}, wantHealthy: false},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			sim, err := simulator.New("dgxa100")
			if err != nil {
				t.Fatal(err)
			}
			o := nvidia.DefaultOptions()
			o.Backend = "simulated"
			o.DisableHealthChecks, o.EnableHealthChecks = tc.disable, tc.enable
			src, err := NewNVIDIASource(context.Background(), o, sim)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			c := NewCollector("n", []Source{src}, nil, nil)
			uuid := c.CollectOnce(context.Background()).Devices[3].ID
			last := tc.xids[len(tc.xids)-1]
			for _, x := range tc.xids {
				if err := sim.InjectXID(uuid, x); err != nil {
					t.Fatal(err)
				}
				// Let each event arrive before the next.
				deadline := time.Now().Add(10 * time.Second)
				for time.Now().Before(deadline) {
					if s := find(gatherAfter(t, c), "DCGM_FI_DEV_XID_ERRORS", map[string]string{"UUID": uuid}); len(s) == 1 && s[0].value == float64(x) {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			all := gatherAfter(t, c)
			if s := find(all, "DCGM_FI_DEV_XID_ERRORS", map[string]string{"UUID": uuid}); len(s) != 1 || s[0].value != float64(last) {
				t.Fatalf("DCGM_FI_DEV_XID_ERRORS = %v, want %d", s, last)
			}
			h := find(all, "accelstack_gpu_healthy", map[string]string{"UUID": uuid})
			if len(h) != 1 || (h[0].value == 1) != tc.wantHealthy {
				t.Errorf("accelstack_gpu_healthy = %v, want healthy %v", h, tc.wantHealthy)
			}
		})
	}
}

// gatherAfter collects once, then gathers.
func gatherAfter(t *testing.T, c *Collector) []series {
	c.CollectOnce(context.Background())
	return gather(t, c)
}
