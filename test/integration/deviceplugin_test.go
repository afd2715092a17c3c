package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/simcontrol"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/kubelet"
	"github.com/accelstack/accelstack/test/testutil"
)

func buildDevicePlugin(t *testing.T) string {
	t.Helper()
	bin, err := harness.BuildCmd("device-plugin")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// pluginEnv is a minimal environment for the plugin binary plus extra, so
// variables of the test's own environment (MIG_STRATEGY, CONFIG_FILE,
// DP_*, NODE_NAME, KUBECONFIG) cannot change what is tested.
func pluginEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir()}, extra...)
}

// syncBuffer is a strings.Builder safe for a process writing while the
// test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitLog waits until the log holds want.
func waitLog(ctx context.Context, t *testing.T, log *syncBuffer, want string) {
	t.Helper()
	for !strings.Contains(log.String(), want) {
		select {
		case <-ctx.Done():
			t.Fatalf("log never showed %q", want)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// deviceHealth returns the health of device id in devs, "missing" when absent.
func deviceHealth(devs []*pluginapi.Device, id string) string {
	for _, d := range devs {
		if d.ID == id {
			return d.Health
		}
	}
	return "missing"
}

// httpGet returns the status code and body of url.
func httpGet(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestDevicePluginBinary runs the real binary on a simulated machine against
// the fake kubelet: advertising, XID injection through the control socket,
// SIGHUP reload of a changed config file, and socket removal on SIGTERM.
func TestDevicePluginBinary(t *testing.T) {
	t.Parallel()
	bin := buildDevicePlugin(t)
	dir := testutil.ShortDir(t)
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
	port, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	metrics := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "--backend=simulated", "--simulate=dgxa100-mig-mixed", "--device-plugin-path="+k.Dir(),
		"--config-file="+cfg, "--simulate-control-socket="+control, "--health-quiet-period=0", "--metrics-address="+metrics)
	cmd.Env = pluginEnv("DP_DISABLE_HEALTHCHECKS=48")
	var log syncBuffer
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
	// Registered resources read 1 and the plugin is ready; the gauge is
	// set right after the kubelet's answer, so wait for it.
	for {
		code, body, err := httpGet(ctx, "http://"+metrics+"/readyz")
		if err == nil && code == http.StatusOK {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("/readyz never answered 200: %d %q %v", code, body, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, body, err := httpGet(ctx, "http://"+metrics+"/metrics"); err != nil ||
		!strings.Contains(body, `accelstack_deviceplugin_registered{resource="nvidia.com/gpu"} 1`) ||
		!strings.Contains(body, `accelstack_deviceplugin_registered{resource="nvidia.com/mig-1g.5gb"} 1`) {
		t.Errorf("/metrics = %q (%v), want both resources registered", body, err)
	}
	devs := gpu.Devices()
	id, other := devs[0].ID, devs[1].ID
	// XID 48 is ignored through DP_DISABLE_HEALTHCHECKS, 79 is not. Events
	// are handled in order: once the other GPU is Unhealthy after its 79,
	// the 48 sent before it has been handled, and the GPU is still Healthy.
	for _, c := range []string{"xid " + id + " 48", "xid " + other + " 79"} {
		if err := simcontrol.Send(control, c); err != nil {
			t.Fatal(err)
		}
	}
	devs, _, err = gpu.WaitDevices(ctx, func(d []*pluginapi.Device) bool { return deviceHealth(d, other) == pluginapi.Unhealthy })
	if err != nil {
		t.Fatal(err)
	}
	if h := deviceHealth(devs, id); h != pluginapi.Healthy {
		t.Errorf("GPU after the ignored XID 48 is %s, want Healthy", h)
	}
	if err := simcontrol.Send(control, "xid "+id+" 79"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := gpu.WaitDevices(ctx, func(d []*pluginapi.Device) bool { return deviceHealth(d, id) == pluginapi.Unhealthy }); err != nil {
		t.Fatal(err)
	}
	if err := simcontrol.Send(control, "xid nope 79"); err == nil || !strings.Contains(err.Error(), "no simulated device") {
		t.Errorf("control with unknown device = %v, want an error", err)
	}
	// SIGHUP after switching to time-slicing re-registers as gpu.shared.
	if err := os.WriteFile(cfg, []byte("version: v1\nflags:\n  migStrategy: none\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	shared, err := k.WaitPlugin(ctx, "nvidia.com/gpu.shared")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(shared.Devices()); n != 16 {
		t.Errorf("gpu.shared devices = %d, want 16", n)
	}
	// A bad file on SIGHUP is refused and the last good one kept: nothing
	// re-registers.
	registrations := len(k.Registrations())
	if err := os.WriteFile(cfg, []byte("version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(ctx, t, &log, "sharing.timeSlicing.resources[0].replicas")
	if got := len(k.Registrations()); got != registrations {
		t.Errorf("registrations after a rejected reload = %d, want %d", got, registrations)
	}
	if n := len(shared.Devices()); n != 16 {
		t.Errorf("gpu.shared devices after a rejected reload = %d, want 16", n)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("plugin exit: %v", err)
	}
	entries, err := os.ReadDir(k.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "kubelet.sock" {
			t.Errorf("left behind after shutdown: %s", e.Name())
		}
	}
}

// TestDevicePluginInitErrors covers nodes without NVML and invalid input.
func TestDevicePluginInitErrors(t *testing.T) {
	t.Parallel()
	bin := buildDevicePlugin(t)
	dir := testutil.ShortDir(t)
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
			c := exec.Command(bin, args...)
			c.Env = pluginEnv()
			out, err := c.CombinedOutput()
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
	cmd.Env = pluginEnv("FAIL_ON_INIT_ERROR=false")
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
	deadline := time.After(time.Minute)
	for !strings.Contains(readLog(), "advertising nothing") {
		select {
		case err := <-exited:
			t.Fatalf("plugin exited (%v): %s", err, readLog())
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("plugin never said it advertises nothing: %s", readLog())
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
