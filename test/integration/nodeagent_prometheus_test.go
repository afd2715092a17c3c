package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/podresources"
)

// simulatedUUIDs scrapes the agent and returns the whole-GPU UUIDs by
// gpu index and the MIG devices' (parent UUID, GPU_I_ID) by NVML index.
func scrapeGPUs(t *testing.T, base string) map[string]string {
	t.Helper()
	out := map[string]string{}
	naEventually(t, "agent reports GPUs", func() error {
		body, err := naGet(context.Background(), base+"/metrics")
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(body), "\n") {
			if !strings.HasPrefix(line, "DCGM_FI_DEV_GPU_TEMP{") || !strings.Contains(line, `GPU_I_ID=""`) {
				continue
			}
			out[labelOf(line, "gpu")] = labelOf(line, "UUID")
		}
		if len(out) != 8 {
			return fmt.Errorf("found %d GPUs, want 8", len(out))
		}
		return nil
	})
	return out
}

func labelOf(line, name string) string {
	i := strings.Index(line, name+`="`)
	if i < 0 {
		return ""
	}
	rest := line[i+len(name)+2:]
	return rest[:strings.IndexByte(rest, '"')]
}

// TestNodeAgentPrometheus runs the node-agent binary on a simulated DGX
// A100 with a fake kubelet PodResources socket, scrapes it with a real
// Prometheus and finds the GPU series with the pods' labels through
// Prometheus's HTTP API: a whole GPU, and a GPU shared by two pods.
func TestNodeAgentPrometheus(t *testing.T) {
	t.Parallel()
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("prometheus not installed: %v", err)
		}
		t.Skipf("prometheus not installed (Debian package prometheus): %v", err)
	}
	pr := podresources.Start(t)
	base, _ := startNodeAgent(t, "--backend=simulated", "--simulate=dgxa100", "--collect-interval=200ms",
		"--pod-resources-socket="+pr.Path(), "--node-name=", "-v=2")
	gpus := scrapeGPUs(t, base)
	pr.SetPods(
		podresources.Pod("research", "trainer", podresources.Container("pytorch", podresources.Devices("nvidia.com/gpu", gpus["0"], gpus["1"]))),
		podresources.Pod("research", "notebook-a", podresources.Container("jupyter", podresources.Devices("nvidia.com/gpu.shared", gpus["3"]+"::0"))),
		podresources.Pod("serving", "notebook-b", podresources.Container("jupyter", podresources.Devices("nvidia.com/gpu.shared", gpus["3"]+"::1"))),
	)

	promPort, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: node-agent
    static_configs:
      - targets: [%q]
`, strings.TrimPrefix(base, "http://"))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	promAddr := "127.0.0.1:" + strconv.Itoa(promPort)
	prom := harness.StartProcess(t, "prometheus", promBin, []string{
		"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + promAddr,
	})
	if err := prom.WaitReady(60*time.Second, func(ctx context.Context) error {
		_, err := naGet(ctx, "http://"+promAddr+"/-/ready")
		return err
	}); err != nil {
		t.Fatal(err)
	}

	testCases := []struct {
		name  string
		query string
		want  []string
	}{
		{name: "whole GPUs of one pod", query: `DCGM_FI_DEV_GPU_UTIL{pod="trainer"}`, want: []string{
			"0 " + gpus["0"] + " research/trainer/pytorch", "1 " + gpus["1"] + " research/trainer/pytorch"}},
		{name: "one series per pod sharing a GPU", query: fmt.Sprintf(`DCGM_FI_DEV_FB_USED{UUID=%q}`, gpus["3"]), want: []string{
			"3 " + gpus["3"] + " research/notebook-a/jupyter", "3 " + gpus["3"] + " serving/notebook-b/jupyter"}},
		{name: "free GPU without pod labels", query: fmt.Sprintf(`DCGM_FI_DEV_GPU_TEMP{UUID=%q}`, gpus["5"]), want: []string{
			"5 " + gpus["5"] + " //"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			naEventually(t, "query "+tc.query, func() error {
				got, err := promQuery(promAddr, tc.query)
				if err != nil {
					return err
				}
				if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
					return fmt.Errorf("got %q, want %q", got, tc.want)
				}
				return nil
			})
		})
	}
}

// promQuery runs an instant query and returns "gpu UUID ns/pod/container"
// per series, sorted.
func promQuery(addr, q string) ([]string, error) {
	body, err := naGet(context.Background(), "http://"+addr+"/api/v1/query?query="+url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	var resp struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&resp); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", body, err)
	}
	var out []string
	for _, r := range resp.Data.Result {
		m := r.Metric
		out = append(out, fmt.Sprintf("%s %s %s/%s/%s", m["gpu"], m["UUID"], m["namespace"], m["pod"], m["container"]))
	}
	sort.Strings(out)
	return out, nil
}
