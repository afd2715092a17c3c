package reclaim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

// The node agent's series the Keeper reads.
const (
	// GPUUtilizationMetric is a GPU's utilization in percent, one series
	// per container holding the GPU, labelled namespace, pod, container.
	GPUUtilizationMetric = "DCGM_FI_DEV_GPU_UTIL"
	// NPUUtilizationMetric is an Ascend NPU's, labelled namespace,
	// pod_name, container_name.
	NPUUtilizationMetric = "npu_chip_info_utilization"
	// podResourcesUpMetric is 1 while the agent's pod labels are current.
	podResourcesUpMetric = "accelstack_node_agent_podresources_up"
	// dcgmPrefix starts every GPU series; a pod with some but no
	// utilization series holds MIG devices, which have none.
	dcgmPrefix = "DCGM_FI_"
)

// NodeAgentLabelSelector finds the node agent's pods.
const NodeAgentLabelSelector = "app.kubernetes.io/name=node-agent"

// errNotMeasured is the GPU evidence of a pod whose devices have no
// utilization reading (MIG devices): it is not required.
var errNotMeasured = errors.New("its devices report no utilization (MIG)")

// podKey names a pod in the node agent's labels.
type podKey struct{ namespace, name string }

// nodeMetrics is what one scrape of a node agent says about the pods of
// its node.
type nodeMetrics struct {
	// attributed is false when the agent has no current pod labels.
	attributed bool
	// util is the utilization series of each pod.
	util map[podKey][]float64
	// held are the pods with any device series.
	held map[podKey]bool
}

// parseNodeMetrics parses a node agent's /metrics in the Prometheus text
// format.
func parseNodeMetrics(body []byte) (*nodeMetrics, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parsing the node agent's metrics: %w", err)
	}
	m := &nodeMetrics{attributed: true, util: map[podKey][]float64{}, held: map[podKey]bool{}}
	if f, ok := families[podResourcesUpMetric]; ok {
		for _, s := range f.GetMetric() {
			if value(s) != 1 {
				m.attributed = false
			}
		}
	}
	for name, f := range families {
		podLabel, nsLabel := "pod", "namespace"
		switch {
		case name == NPUUtilizationMetric:
			podLabel, nsLabel = "pod_name", "namespace"
		case strings.HasPrefix(name, dcgmPrefix):
		default:
			continue
		}
		for _, s := range f.GetMetric() {
			k := podKey{namespace: label(s, nsLabel), name: label(s, podLabel)}
			if k.name == "" || k.namespace == "" {
				continue
			}
			m.held[k] = true
			if name == GPUUtilizationMetric || name == NPUUtilizationMetric {
				m.util[k] = append(m.util[k], value(s))
			}
		}
	}
	return m, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

// scrapeNodeAgent reads and parses a node agent's metrics at base, e.g.
// http://10.1.2.3:9400.
func scrapeNodeAgent(ctx context.Context, c *http.Client, base string) (*nodeMetrics, error) {
	h := http.Header{"Accept": {string(expfmt.NewFormat(expfmt.TypeTextPlain))}}
	body, err := get(ctx, c, base+"/metrics", h)
	if err != nil {
		return nil, err
	}
	return parseNodeMetrics(body)
}

// utilization is the highest utilization of a pod's devices in m, or an
// error saying why there is none.
func (m *nodeMetrics) utilization(pod *corev1.Pod) (float64, error) {
	k := podKey{namespace: pod.Namespace, name: pod.Name}
	if vs, ok := m.util[k]; ok {
		highest := 0.0
		for _, v := range vs {
			highest = max(highest, v)
		}
		return highest, nil
	}
	if !m.attributed {
		return 0, errors.New("the node agent has no pod attribution (PodResources API down)")
	}
	if m.held[k] {
		return 0, errNotMeasured
	}
	return 0, errors.New("the node agent reports no device of the pod")
}

// holdsAccelerators tells whether a pod's containers ask for GPUs or NPUs
// the node agent measures: the resources of a vendor's device plugin
// (accelerator.VendorOf), nvidia.com/* (whole, shared or MIG) and
// huawei.com/Ascend*.
func holdsAccelerators(pod *corev1.Pod) bool {
	for _, c := range pod.Spec.Containers {
		for _, rl := range []corev1.ResourceList{c.Resources.Limits, c.Resources.Requests} {
			for name, q := range rl {
				if accelerator.VendorOf(string(name)) != "" && !q.IsZero() {
					return true
				}
			}
		}
	}
	return false
}

// gpuWatch is what the Keeper remembers of a pod's GPU readings: the
// metrics are a reading of now, so "GPU at most 0% for 1h" can only be
// said of the time the Keeper itself has watched.
type gpuWatch struct {
	// since is when the current run of readings began.
	since time.Time
	// lastReading is the time of the last reading.
	lastReading time.Time
	// lastBusy is the last reading above the threshold; zero when none.
	lastBusy time.Time
	// windowMax is the highest reading since max(lastBusy, since).
	windowMax float64
}

// observe records a reading of util at now and returns the evidence. A gap
// of more than maxGap since the last reading starts a new run: what
// happened in the gap is unknown.
func (w *gpuWatch) observe(now time.Time, util, threshold float64, maxGap time.Duration) Evidence {
	if w.since.IsZero() || now.Sub(w.lastReading) > maxGap {
		w.since, w.windowMax = now, 0
	}
	w.lastReading = now
	busy := util > threshold
	if busy {
		w.lastBusy, w.windowMax = now, 0
	} else {
		w.windowMax = max(w.windowMax, util)
	}
	return Evidence{
		Source: SourceGPU, Required: true, Active: busy,
		Last: w.lastBusy, Since: w.since,
		Utilization: util, WindowMax: w.windowMax, Threshold: threshold,
	}
}
