// Command deviceplugin measures the device plugin binary against the fake
// kubelet over real unix sockets and prints a markdown table: Allocate round trips
// (p50, p99), XID-to-Unhealthy latency, kubelet-restart-to-registration
// latency and the plugin's resident memory under MIG mixed.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/simcontrol"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/kubelet"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "deviceplugin bench:", err)
		os.Exit(1)
	}
}

// plugin is a running device-plugin binary with its fake kubelet.
type plugin struct {
	dir     string
	control string
	kubelet *kubelet.Kubelet
	cmd     *exec.Cmd
}

func start(bin, profile string, args ...string) (*plugin, error) {
	dir, err := os.MkdirTemp("", "dpb")
	if err != nil {
		return nil, err
	}
	k, err := kubelet.Start(filepath.Join(dir, "plugins"))
	if err != nil {
		return nil, err
	}
	p := &plugin{dir: dir, control: filepath.Join(dir, "sim.sock"), kubelet: k}
	args = append([]string{"--backend=simulated", "--simulate=" + profile, "--device-plugin-path=" + k.Dir(),
		"--simulate-control-socket=" + p.control}, args...)
	p.cmd = exec.Command(bin, args...)
	log, err := os.Create(filepath.Join(dir, "plugin.log"))
	if err != nil {
		return nil, err
	}
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *plugin) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
	p.kubelet.Stop()
	os.RemoveAll(p.dir)
}

func percentile(d []time.Duration, q float64) time.Duration {
	s := append([]time.Duration{}, d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(q*float64(len(s)-1))]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64) + " ms"
}

type row struct{ name, value, target string }

func run() error {
	root, err := harness.RepoRoot()
	if err != nil {
		return err
	}
	bin := filepath.Join(os.TempDir(), "accelstack-bench-device-plugin")
	build := exec.Command("go", "build", "-o", bin, "./cmd/device-plugin")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building device-plugin: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var rows []row

	// Allocate round trips: whole GPUs, then 8 GPUs x 16 replicas.
	whole, err := start(bin, "dgxa100")
	if err != nil {
		return err
	}
	gpu, err := whole.kubelet.WaitPlugin(ctx, "nvidia.com/gpu")
	if err != nil {
		return err
	}
	ids := idsOf(gpu.Devices())
	for _, n := range []int{1, 8} {
		p50, p99, err := allocate(ctx, gpu, ids[:n])
		if err != nil {
			return err
		}
		rows = append(rows, row{fmt.Sprintf("Allocate %d GPU(s): p50 / p99", n), p50 + " / " + p99, "p99 < 1 ms"})
	}

	// XID -> Unhealthy at the kubelet, one sample per GPU.
	var xid []time.Duration
	for _, id := range ids {
		t0 := time.Now()
		if err := simcontrol.Send(whole.control, "xid "+id+" 79"); err != nil {
			return err
		}
		_, at, err := gpu.WaitDevices(ctx, func(d []*pluginapi.Device) bool { return healthOf(d, id) == pluginapi.Unhealthy })
		if err != nil {
			return err
		}
		xid = append(xid, at.Sub(t0))
	}
	rows = append(rows, row{"XID -> Unhealthy at kubelet: p50 / max (8 samples)", ms(percentile(xid, 0.5)) + " / " + ms(percentile(xid, 1)), "< 100 ms"})

	// kubelet.sock re-created -> plugin registered again.
	var rereg []time.Duration
	for i := 0; i < 20; i++ {
		t0 := time.Now()
		if err := whole.kubelet.Restart(); err != nil {
			return err
		}
		if _, err := whole.kubelet.WaitPlugin(ctx, "nvidia.com/gpu"); err != nil {
			return err
		}
		regs := whole.kubelet.Registrations()
		rereg = append(rereg, regs[len(regs)-1].At.Sub(t0))
	}
	rows = append(rows, row{"kubelet.sock re-created -> re-registered: p50 / max (20 restarts)", ms(percentile(rereg, 0.5)) + " / " + ms(percentile(rereg, 1)), "< 500 ms"})
	whole.stop()

	cfg := filepath.Join(os.TempDir(), "accelstack-bench-ts.yaml")
	if err := os.WriteFile(cfg, []byte("version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 16\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(cfg)
	shared, err := start(bin, "dgxa100", "--config-file="+cfg)
	if err != nil {
		return err
	}
	sp, err := shared.kubelet.WaitPlugin(ctx, "nvidia.com/gpu.shared")
	if err != nil {
		return err
	}
	rids := idsOf(sp.Devices())
	pick, err := sp.GetPreferredAllocation(ctx, rids, nil, 8)
	if err != nil {
		return err
	}
	p50, p99, err := allocate(ctx, sp, pick)
	if err != nil {
		return err
	}
	rows = append(rows, row{fmt.Sprintf("Allocate 8 replicas of 8 GPUs x 16 (%d IDs): p50 / p99", len(rids)), p50 + " / " + p99, "p99 < 1 ms"})
	shared.stop()

	// Resident memory under MIG mixed.
	migp, err := start(bin, "dgxa100-mig-mixed", "--mig-strategy=mixed")
	if err != nil {
		return err
	}
	total := 0
	for _, r := range []string{"nvidia.com/gpu", "nvidia.com/mig-1g.5gb", "nvidia.com/mig-2g.10gb", "nvidia.com/mig-3g.20gb"} {
		p, err := migp.kubelet.WaitPlugin(ctx, r)
		if err != nil {
			return err
		}
		total += len(p.Devices())
	}
	mem, err := harness.ProcessMemory(migp.cmd.Process.Pid)
	if err != nil {
		return err
	}
	rows = append(rows, row{fmt.Sprintf("Plugin resident memory, 8 GPUs MIG mixed (4 resources, %d devices)", total), mem.String(), "< 30 MiB"})
	migp.stop()

	fmt.Println("device-plugin on a simulated dgxa100, with the fake kubelet over unix sockets.")
	fmt.Println()
	fmt.Println("| measure | measured | target |")
	fmt.Println("|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s |\n", r.name, r.value, r.target)
	}
	return nil
}

func allocate(ctx context.Context, p *kubelet.Plugin, ids []string) (string, string, error) {
	const n = 2000
	var d []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := p.Allocate(ctx, ids); err != nil {
			return "", "", err
		}
		if i >= 100 { // warm-up
			d = append(d, time.Since(t0))
		}
	}
	return ms(percentile(d, 0.5)), ms(percentile(d, 0.99)), nil
}

func idsOf(devs []*pluginapi.Device) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = d.ID
	}
	return out
}

func healthOf(devs []*pluginapi.Device, id string) string {
	for _, d := range devs {
		if d.ID == id {
			return d.Health
		}
	}
	return ""
}
