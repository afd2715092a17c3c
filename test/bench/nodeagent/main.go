// Command nodeagent measures the node agent on a simulated DGX A100 with
// MIG mixed (8 GPUs, 25 MIG devices) and 64 pods attributed through a fake
// kubelet PodResources socket: collection cycle time, scrape latency, CPU
// and size in-process, and the resident memory of the real binary, as markdown.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/accelstack/accelstack/pkg/nodeagent"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/podresources"
)

const (
	profile = "dgxa100-mig-mixed"
	pods    = 64
	cycles  = 200
	scrapes = 1000
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "nodeagent-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pr, err := podresources.New(filepath.Join(dir, "kubelet.sock"))
	if err != nil {
		return err
	}
	defer pr.Stop()

	ctx := context.Background()
	agent, err := nodeagent.New(ctx, nodeagent.Config{Backend: "simulated", Simulate: profile,
		PodResourcesSocket: pr.Path(), NodeName: "", CollectInterval: time.Hour})
	if err != nil {
		return err
	}
	first := agent.Collector().CollectOnce(ctx)
	setPods(pr, first.Devices)
	var cycle []time.Duration
	cpuStart := cpuTime()
	for i := 0; i < cycles; i++ {
		start := time.Now()
		agent.Collector().CollectOnce(ctx)
		cycle = append(cycle, time.Since(start))
	}
	cycleCPU := (cpuTime() - cpuStart) / cycles
	snap := agent.Collector().Snapshot()
	owned := 0
	for _, o := range snap.Owners {
		owned += len(o)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: agent.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	url := "http://" + l.Addr().String() + "/metrics"
	cpuStart = cpuTime()
	lat, size, series, err := scrape(url, scrapes)
	if err != nil {
		return err
	}
	scrapeCPU := (cpuTime() - cpuStart) / scrapes

	rss, err := binaryRSS(dir, pr.Path())
	if err != nil {
		return err
	}
	fmt.Printf("node-agent on a simulated %s (%d devices), %d pods attributed (%d device-owner pairs).\n\n", profile, len(snap.Devices), pods, owned)
	fmt.Println("| measure | p50 | p99 | CPU per op |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| collection cycle | %s | %s | %s |\n", pct(cycle, 50), pct(cycle, 99), cycleCPU.Round(time.Microsecond))
	fmt.Printf("| scrape /metrics (%d scrapes, gzip) | %s | %s | %s |\n", scrapes, pct(lat, 50), pct(lat, 99), scrapeCPU.Round(time.Microsecond))
	fmt.Println("\nCPU per op is the process's user and system time over the loop divided by its count; a scrape's includes the in-process client's request and decompression.")
	fmt.Printf("\nScrape size: %d bytes, %d DCGM series. Resident memory of the real binary after %d scrapes: %s (dcgm-exporter users report 135-480 MiB).\n", size, series, scrapes, rss)
	return nil
}

// setPods gives 64 pods devices: every MIG device, then whole GPUs, then
// time-sliced replicas of the last GPU shared by the remaining pods.
func setPods(pr *podresources.Server, devs []nodeagent.Device) {
	var migs, gpus []nodeagent.Device
	for _, d := range devs {
		if d.MIG != nil {
			migs = append(migs, d)
		} else if len(d.Aliases) > 0 && (d.Aliases[0] == "6" || d.Aliases[0] == "7") {
			gpus = append(gpus, d)
		}
	}
	var list []*podresourcesv1.PodResources
	for i := 0; i < pods; i++ {
		var dev *podresourcesv1.ContainerDevices
		switch {
		case i < len(migs):
			dev = podresources.Devices("nvidia.com/mig-"+migs[i].MIG.Profile, migs[i].ID)
		case i == len(migs):
			dev = podresources.Devices("nvidia.com/gpu", gpus[0].ID)
		default:
			dev = podresources.Devices("nvidia.com/gpu.shared", gpus[1].ID+"::"+strconv.Itoa(i))
		}
		list = append(list, podresources.Pod("ns-"+strconv.Itoa(i%8), "pod-"+strconv.Itoa(i), podresources.Container("main", dev)))
	}
	pr.SetPods(list...)
}

func scrape(url string, n int) ([]time.Duration, int, int, error) {
	var lat []time.Duration
	size, series := 0, 0
	for i := 0; i < n; i++ {
		start := time.Now()
		resp, err := http.Get(url)
		if err != nil {
			return nil, 0, 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, 0, 0, err
		}
		lat = append(lat, time.Since(start))
		size = len(body)
		series = 0
		for _, line := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(line, "DCGM_") {
				series++
			}
		}
	}
	return lat, size, series, nil
}

// binaryRSS builds and runs the agent binary, scrapes it, and reads VmRSS.
func binaryRSS(dir, socket string) (string, error) {
	bin := filepath.Join(dir, "node-agent")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/node-agent").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--backend=simulated", "--simulate="+profile, "--address="+addr,
		"--pod-resources-socket="+socket, "--collect-interval=100ms")
	if err := cmd.Start(); err != nil {
		return "", err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url := "http://" + addr + "/metrics"
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), "DCGM_FI_DEV_GPU_UTIL") {
				break
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("agent binary not serving GPU series: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, _, _, err := scrape(url, scrapes); err != nil {
		return "", err
	}
	mem, err := harness.ProcessMemory(cmd.Process.Pid)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s, binary %.1f MiB", mem, float64(fi.Size())/(1<<20)), nil
}

// cpuTime returns the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func pct(d []time.Duration, p int) string {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return s[i].Round(time.Microsecond).String()
}
