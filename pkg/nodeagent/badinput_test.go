package nodeagent

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/nvidia"
	"github.com/accelstack/accelstack/test/podresources"
)

// failingSource fails every collection after returning its devices.
type failingSource struct {
	devices []Device
	err     error
}

func (f *failingSource) Name() string { return "broken" }
func (f *failingSource) Collect(context.Context) (SourceSnapshot, error) {
	return SourceSnapshot{Devices: f.devices}, f.err
}
func (f *failingSource) Close() error { return nil }

func errorsTotal(all []series, source string) float64 {
	for _, s := range find(all, "accelstack_node_agent_collection_errors_total", map[string]string{"source": source}) {
		return s.value
	}
	return -1
}

func TestUnreadableConfigKeepsServing(t *testing.T) {
	cfg := writeConfig(t, timeSlicingConfig)
	src, _ := newSimSource(t, "dgxa100", cfg)
	sink := &logSink{}
	ctx := ctxWithLog(sink)
	c := NewCollector("node-1", []Source{src}, nil, nil)
	s := c.CollectOnce(ctx)
	if got := s.NodeLabels[LabelGPUReplicas]; got != "4" {
		t.Fatalf("replicas = %q with a good config, want 4", got)
	}
	for _, bad := range []string{"version: v2\n", ""} {
		if bad == "" {
			if err := os.Remove(cfg); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(cfg, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		s = c.CollectOnce(ctx)
		if got := s.NodeLabels[LabelGPUReplicas]; got != "4" {
			t.Errorf("replicas = %q after config became %q, want the last good value 4", got, bad)
		}
		if len(s.Devices) != 8 {
			t.Errorf("devices = %d with a bad config, want 8 still served", len(s.Devices))
		}
	}
	all := gather(t, c)
	if got := errorsTotal(all, "nvidia"); got != 2 {
		t.Errorf("errors{source=nvidia} = %v, want 2", got)
	}
	if len(find(all, "DCGM_FI_DEV_GPU_UTIL", nil)) != 8 {
		t.Errorf("GPU series not served with a bad config")
	}
	if sink.count("keeping the last good settings") != 2 || sink.count(cfg) == 0 {
		t.Errorf("log does not name the config problem and file:\n%s", strings.Join(sink.lines, "\n"))
	}
}

func TestBackendInitFailureKeepsServing(t *testing.T) {
	o := nvidia.DefaultOptions() // real NVML
	o.HealthQuietPeriod = time.Minute
	src, err := NewNVIDIASource(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sink := &logSink{}
	c := NewCollector("node-1", []Source{src}, nil, nil)
	for i := 0; i < 3; i++ {
		s := c.CollectOnce(ctxWithLog(sink))
		if len(s.Devices) > 0 {
			t.Skip("this machine has an NVIDIA driver; the init failure path needs one without")
		}
	}
	all := gather(t, c)
	if got := errorsTotal(all, "nvidia"); got != 3 {
		t.Errorf("errors{source=nvidia} = %v, want 3", got)
	}
	if len(find(all, "accelstack_node_agent_last_collection_timestamp_seconds", nil)) != 1 {
		t.Error("self metrics not served after a backend failure")
	}
	if n := sink.count("Reading devices failed"); n != 1 {
		t.Errorf("logged the persistent failure %d times, want once:\n%s", n, strings.Join(sink.lines, "\n"))
	}
	if sink.count("libnvidia-ml.so.1") == 0 {
		t.Errorf("log does not name the missing library:\n%s", strings.Join(sink.lines, "\n"))
	}
}

func TestPodResourcesFailureServesWithoutPodLabels(t *testing.T) {
	gpu := Device{Vendor: accelerator.VendorNVIDIA, ID: "GPU-1", Index: "0", Model: "Test GPU", Healthy: true}
	gpu.Set(FieldTemperatureCelsius, 40)
	src := &failingSource{devices: []Device{gpu}}
	srv := podresources.Start(t)
	srv.SetPods(podresources.Pod("ns", "p", podresources.Container("c", podresources.Devices("nvidia.com/gpu", "GPU-1"))))
	sink := &logSink{}
	ctx := ctxWithLog(sink)
	c := NewCollector("node-1", []Source{src}, &PodResourcesClient{Socket: srv.Path()}, nil)

	c.CollectOnce(ctx)
	if got := podsOf(find(gather(t, c), "DCGM_FI_DEV_GPU_TEMP", nil)); len(got) != 1 || got[0] != "ns/p/c" {
		t.Fatalf("pods = %v, want ns/p/c", got)
	}
	srv.SetError(errors.New("kubelet is restarting"))
	c.CollectOnce(ctx)
	c.CollectOnce(ctx)
	all := gather(t, c)
	if got := podsOf(find(all, "DCGM_FI_DEV_GPU_TEMP", nil)); len(got) != 1 || got[0] != "//" {
		t.Errorf("pods = %v during a PodResources failure, want one series without pod labels", got)
	}
	if got := find(all, "accelstack_node_agent_podresources_up", nil); len(got) != 1 || got[0].value != 0 {
		t.Errorf("podresources_up = %v, want 0", got)
	}
	if got := errorsTotal(all, "podresources"); got != 2 {
		t.Errorf("errors{source=podresources} = %v, want 2", got)
	}
	if n := sink.count("kubelet is restarting"); n != 1 {
		t.Errorf("logged the failure %d times, want once:\n%s", n, strings.Join(sink.lines, "\n"))
	}
	srv.SetPods(podresources.Pod("ns", "p", podresources.Container("c", podresources.Devices("nvidia.com/gpu", "GPU-1"))))
	c.CollectOnce(ctx)
	if got := podsOf(find(gather(t, c), "DCGM_FI_DEV_GPU_TEMP", nil)); len(got) != 1 || got[0] != "ns/p/c" {
		t.Errorf("pods = %v after recovery, want ns/p/c", got)
	}
	if sink.count("Recovered") != 1 {
		t.Errorf("recovery not logged:\n%s", strings.Join(sink.lines, "\n"))
	}
}

func TestSourceErrorServesPartialSnapshot(t *testing.T) {
	gpu := Device{Vendor: accelerator.VendorNVIDIA, ID: "GPU-1", Index: "0", Healthy: false}
	c := NewCollector("n", []Source{&failingSource{devices: []Device{gpu}, err: errors.New("GPU 1 is lost")}}, nil, nil)
	c.CollectOnce(context.Background())
	all := gather(t, c)
	if got := find(all, "accelstack_gpu_healthy", map[string]string{"UUID": "GPU-1"}); len(got) != 1 || got[0].value != 0 {
		t.Errorf("accelstack_gpu_healthy = %v, want one series at 0", got)
	}
	if got := errorsTotal(all, "broken"); got != 1 {
		t.Errorf("errors{source=broken} = %v, want 1", got)
	}
}
