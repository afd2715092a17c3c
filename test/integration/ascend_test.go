package integration

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/simcontrol"
	"github.com/accelstack/accelstack/test/kubelet"
	"github.com/accelstack/accelstack/test/testutil"
)

// TestAscendDevicePluginBinary runs the real binary with --vendor=ascend
// on a simulated 910B node against the fake kubelet: registration,
// Allocate, a fault injected through the control socket turning a chip
// Unhealthy, and its recovery.
func TestAscendDevicePluginBinary(t *testing.T) {
	t.Parallel()
	bin := buildDevicePlugin(t)
	dir := testutil.ShortDir(t)
	k, err := kubelet.Start(filepath.Join(dir, "plugins"))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	control := filepath.Join(dir, "sim.sock")
	cmd := exec.Command(bin, "--vendor=ascend", "--backend=simulated", "--simulate=ascend910b-8-dual",
		"--device-plugin-path="+k.Dir(), "--simulate-control-socket="+control, "--use-ascend-docker=false")
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("plugin log:\n%s", log.String())
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := k.WaitPlugin(ctx, accelerator.Ascend910)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Devices()); n != 8 {
		t.Fatalf("advertised %d chips, want 8", n)
	}
	resp, err := p.Allocate(ctx, []string{"Ascend910-1"})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, d := range resp.ContainerResponses[0].Devices {
		paths = append(paths, d.ContainerPath)
	}
	if got, want := strings.Join(paths, " "), "/dev/davinci1 /dev/davinci_manager /dev/devmm_svm /dev/hisi_hdc"; got != want {
		t.Errorf("device specs %q, want %q", got, want)
	}
	health := func(id string) func([]*pluginapi.Device) bool {
		return func(ds []*pluginapi.Device) bool {
			for _, d := range ds {
				if d.ID == id {
					return d.Health == pluginapi.Unhealthy
				}
			}
			return false
		}
	}
	if err := simcontrol.Send(control, "health 5 3 80818692"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.WaitDevices(ctx, health("Ascend910-5")); err != nil {
		t.Fatalf("waiting for Ascend910-5 to turn Unhealthy: %v", err)
	}
	if err := simcontrol.Send(control, "health 5 0"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.WaitDevices(ctx, func(ds []*pluginapi.Device) bool { return !health("Ascend910-5")(ds) }); err != nil {
		t.Fatalf("waiting for Ascend910-5 to recover: %v", err)
	}
	if err := simcontrol.Send(control, "health 99 3"); err == nil {
		t.Error("control command for an unknown chip: want an error")
	}
}
