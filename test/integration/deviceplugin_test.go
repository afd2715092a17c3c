package integration

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/nvidia"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/kubelet"
)

func buildDevicePlugin(t *testing.T) string {
	t.Helper()
	bin, err := harness.BuildCmd("device-plugin")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func shortTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "dpi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestDevicePluginBinary runs the real binary on a simulated machine against
// the fake kubelet: advertising, XID injection through the control socket,
// SIGHUP reload of a changed config file, and socket removal on SIGTERM.
func TestDevicePluginBinary(t *testing.T) {
	bin := buildDevicePlugin(t)
	dir := shortTempDir(t)
	k, err := kubelet.Start(filepath.Join(dir, "plugins"))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("version: v1\nflags:\n  migStrategy: mixed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	control := filepath.Join(dir, "sim.sock")
	cmd := exec.Command(bin, "--backend=simulated", "--simulate=dgxa100-mig-mixed", "--device-plugin-path="+k.Dir(),
		"--config-file="+cfg, "--simulate-control-socket="+control, "--health-quiet-period=0")
	cmd.Env = append(os.Environ(), "DP_DISABLE_HEALTHCHECKS=48")
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("plugin log:\n%s", log.String())
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gpu, err := k.WaitPlugin(ctx, "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.WaitPlugin(ctx, "nvidia.com/mig-1g.5gb"); err != nil {
		t.Fatal(err)
	}
	id := gpu.Devices()[0].ID
	// XID 48 is ignored through DP_DISABLE_HEALTHCHECKS, 79 is not; the
	// kubelet sees the device Unhealthy after the second one.
	for _, x := range []string{"48", "79"} {
		if err := nvidia.Control(control, "xid "+id+" "+x); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := gpu.WaitDevices(ctx, func(d []*pluginapi.Device) bool { return d[0].Health == pluginapi.Unhealthy }); err != nil {
		t.Fatal(err)
	}
	if err := nvidia.Control(control, "xid nope 79"); err == nil || !strings.Contains(err.Error(), "no simulated device") {
		t.Errorf("control with unknown device = %v, want an error", err)
	}
	// SIGHUP after switching to time-slicing re-registers as gpu.shared.
	if err := os.WriteFile(cfg, []byte("version: v1\nflags:\n  migStrategy: none\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Signal(syscall.SIGHUP)
	shared, err := k.WaitPlugin(ctx, "nvidia.com/gpu.shared")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(shared.Devices()); n != 16 {
		t.Errorf("gpu.shared devices = %d, want 16", n)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("plugin exit: %v", err)
	}
	entries, _ := os.ReadDir(k.Dir())
	for _, e := range entries {
		if e.Name() != "kubelet.sock" {
			t.Errorf("left behind after shutdown: %s", e.Name())
		}
	}
}

// TestDevicePluginInitErrors covers nodes without NVML and invalid input.
func TestDevicePluginInitErrors(t *testing.T) {
	bin := buildDevicePlugin(t)
	dir := shortTempDir(t)
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	testCases := []struct {
		name     string
		args     []string
		wantCode int
		wantLog  string
	}{
		{name: "no NVML fails", args: []string{"--backend=nvml"}, wantCode: 1, wantLog: "libnvidia-ml.so.1 not found"},
		{name: "bad config file", args: []string{"--backend=simulated", "--simulate=dgxa100", "--config-file=" + bad}, wantCode: 1, wantLog: "sharing.timeSlicing.resources[0].replicas"},
		{name: "single on mixed node", args: []string{"--backend=simulated", "--simulate=dgxa100-mig-mixed", "--mig-strategy=single"}, wantCode: 1, wantLog: "mig strategy single needs a uniform node"},
		{name: "unknown profile", args: []string{"--backend=simulated", "--simulate=dgx1"}, wantCode: 1, wantLog: "unknown simulated profile"},
		{name: "bad mig strategy", args: []string{"--mig-strategy=auto"}, wantCode: 2, wantLog: "--mig-strategy"},
		{name: "bad list strategy", args: []string{"--device-list-strategy=cdi"}, wantCode: 2, wantLog: "--device-list-strategy"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--device-plugin-path=" + dir}, tc.args...)
			out, err := exec.Command(bin, args...).CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			if code != tc.wantCode || !strings.Contains(string(out), tc.wantLog) {
				t.Fatalf("exit %d, want %d with %q; output:\n%s", code, tc.wantCode, tc.wantLog, out)
			}
		})
	}

	// Without NVML and --fail-on-init-error=false the plugin idles,
	// advertising nothing, until stopped.
	k, err := kubelet.Start(filepath.Join(dir, "plugins"))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	cmd := exec.Command(bin, "--backend=nvml", "--device-plugin-path="+k.Dir())
	cmd.Env = append(os.Environ(), "FAIL_ON_INIT_ERROR=false")
	// The plugin writes to a file the test reads while it runs.
	logPath := filepath.Join(dir, "plugin.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	readLog := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	for !strings.Contains(readLog(), "advertising nothing") {
		select {
		case err := <-exited:
			t.Fatalf("plugin exited (%v): %s", err, readLog())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("idle plugin exit: %v\n%s", err, readLog())
	}
	if r := k.Resources(); len(r) != 0 {
		t.Errorf("idle plugin registered %v", r)
	}
}
