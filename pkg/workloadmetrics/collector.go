package workloadmetrics

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Metric names.
const (
	PhaseMetric      = "accelstack_workload_phase"
	ReadyMetric      = "accelstack_workload_ready"
	ReadySinceMetric = "accelstack_workload_ready_since_timestamp_seconds"
	PausedMetric     = "accelstack_workload_paused"
)

var (
	labels     = []string{"kind", "namespace", "name"}
	phaseDesc  = prometheus.NewDesc(PhaseMetric, "Phase of the workload: 1 for its current phase.", append(labels, "phase"), nil)
	readyDesc  = prometheus.NewDesc(ReadyMetric, "1 when the workload is ready (its Ready condition is True, or it is Running when it has none), else 0.", labels, nil)
	sinceDesc  = prometheus.NewDesc(ReadySinceMetric, "Unix time of the last transition of the workload's Ready condition.", labels, nil)
	pausedDesc = prometheus.NewDesc(PausedMetric, "1 when the workload is paused or suspended, else 0.", labels, nil)
)

// listTimeout bounds the listing of one kind at a scrape.
const listTimeout = 10 * time.Second

// Collector reads the workloads of Kinds at each scrape.
type Collector struct {
	reader client.Reader
	scheme *runtime.Scheme
	kinds  []Kind
	log    logr.Logger
}

// NewCollector returns a Collector listing kinds with reader: typed lists
// for the kinds scheme knows (the controllers' caches), unstructured ones
// otherwise.
func NewCollector(reader client.Reader, scheme *runtime.Scheme, kinds []Kind, log logr.Logger) *Collector {
	return &Collector{reader: reader, scheme: scheme, kinds: kinds, log: log}
}

var _ prometheus.Collector = (*Collector)(nil)

// Describe sends the metrics' descriptions.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{phaseDesc, readyDesc, sinceDesc, pausedDesc} {
		ch <- d
	}
}

// Collect sends the state of every workload.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, k := range c.kinds {
		objs, err := c.list(k)
		if err != nil {
			if !meta.IsNoMatchError(err) {
				c.log.Error(err, "Listing workloads for metrics", "kind", k.GVK.Kind)
			}
			continue
		}
		for _, o := range objs {
			for _, m := range state(k, o) {
				ch <- m
			}
		}
	}
}

// list returns the objects of k as unstructured content.
func (c *Collector) list(k Kind) ([]map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	listGVK := k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List")
	if obj, err := c.scheme.New(listGVK); err == nil {
		list, ok := obj.(client.ObjectList)
		if ok {
			if err := c.reader.List(ctx, list); err != nil {
				return nil, err
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				return nil, err
			}
			out := make([]map[string]any, 0, len(items))
			for _, it := range items {
				u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(it)
				if err != nil {
					return nil, err
				}
				out = append(out, u)
			}
			return out, nil
		}
	}
	u := &unstructured.UnstructuredList{}
	u.SetGroupVersionKind(listGVK)
	if err := c.reader.List(ctx, u); err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(u.Items))
	for _, it := range u.Items {
		out = append(out, it.Object)
	}
	return out, nil
}

// state returns the metrics of the object o of kind k.
func state(k Kind, o map[string]any) []prometheus.Metric {
	ns, _, _ := unstructured.NestedString(o, "metadata", "namespace")
	name, _, _ := unstructured.NestedString(o, "metadata", "name")
	lv := []string{k.GVK.Kind, ns, name}
	phase, _, _ := unstructured.NestedString(o, k.PhasePath...)
	if phase == "" {
		phase = "Unknown"
	}
	out := []prometheus.Metric{prometheus.MustNewConstMetric(phaseDesc, prometheus.GaugeValue, 1, append(lv, phase)...)}
	paused := false
	if len(k.PausedPath) > 0 {
		paused, _, _ = unstructured.NestedBool(o, k.PausedPath...)
	}
	ready, since, hasReady := condition(o, "Ready")
	if k.PausedCondition != "" {
		if p, _, ok := condition(o, k.PausedCondition); ok && p {
			paused = true
		}
	}
	out = append(out, prometheus.MustNewConstMetric(pausedDesc, prometheus.GaugeValue, boolValue(paused), lv...))
	if k.Job {
		return out
	}
	if !hasReady {
		ready = k.RunningPhase != "" && phase == k.RunningPhase
	}
	out = append(out, prometheus.MustNewConstMetric(readyDesc, prometheus.GaugeValue, boolValue(ready), lv...))
	if hasReady && !since.IsZero() {
		out = append(out, prometheus.MustNewConstMetric(sinceDesc, prometheus.GaugeValue, float64(since.Unix()), lv...))
	}
	return out
}

// condition returns whether the condition typ of o is True, when it last
// changed, and whether o has it.
func condition(o map[string]any, typ string) (bool, time.Time, bool) {
	conds, _, _ := unstructured.NestedSlice(o, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		var at time.Time
		if s, ok := m["lastTransitionTime"].(string); ok {
			at, _ = time.Parse(time.RFC3339, s)
		}
		return m["status"] == "True", at, true
	}
	return false, time.Time{}, false
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
