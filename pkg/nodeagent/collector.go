package nodeagent

import (
	"context"
	"errors"
	"maps"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/klog/v2"
)

// LabelApplier writes the node labels the agent owns.
type LabelApplier interface {
	// Apply makes labels the full set of labels the agent owns on the
	// node: owned keys missing from labels are removed, keys owned by
	// others are left alone.
	Apply(ctx context.Context, labels map[string]string) error
}

// Sources of errors, as the source label of the errors metric.
const (
	errSourcePodResources = "podresources"
	errSourceNodeLabels   = "node-labels"
)

// Collector reads the sources and the PodResources API on an interval and
// keeps the last Snapshot for scrapes.
type Collector struct {
	sources  []Source
	pods     PodLister
	labels   LabelApplier
	hostname string

	snap atomic.Pointer[Snapshot]
	// collected, when set, runs after each collection once the snapshot
	// is stored (the agent encodes its device families for scrapes).
	collected func()

	duration    prometheus.Histogram
	lastSeconds prometheus.Gauge
	lastTime    prometheus.Gauge
	errors      *prometheus.CounterVec
	podsUp      prometheus.Gauge
	devices     *prometheus.GaugeVec

	mu          sync.Mutex // serialises collections
	lastErr     map[string]string
	applied     map[string]string
	labelsDirty bool
}

// NewCollector returns a collector over sources; pods and labels may be nil.
func NewCollector(hostname string, sources []Source, pods PodLister, labels LabelApplier) *Collector {
	c := &Collector{
		sources: sources, pods: pods, labels: labels, hostname: hostname,
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "accelstack", Subsystem: "node_agent", Name: "collection_duration_seconds",
			Help:    "Time one collection of every device source and the PodResources API took.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		lastSeconds: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "accelstack", Subsystem: "node_agent", Name: "last_collection_duration_seconds",
			Help: "Time the last collection took.",
		}),
		lastTime: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "accelstack", Subsystem: "node_agent", Name: "last_collection_timestamp_seconds",
			Help: "Unix time the last collection ended; scrapes serve its values.",
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "accelstack", Subsystem: "node_agent", Name: "collection_errors_total",
			Help: "Failed collection steps by source: a device source's name, podresources or node-labels.",
		}, []string{"source"}),
		podsUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "accelstack", Subsystem: "node_agent", Name: "podresources_up",
			Help: "1 when the last collection read the kubelet PodResources API, else 0 (series carry no pod labels).",
		}),
		devices: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "accelstack", Subsystem: "node_agent", Name: "devices",
			Help: "Devices in the last collection by vendor (GPUs, MIG devices, NPUs).",
		}, []string{"vendor"}),
		lastErr: map[string]string{},
	}
	c.errors.WithLabelValues(errSourcePodResources)
	for _, s := range sources {
		c.errors.WithLabelValues(s.Name())
	}
	if labels != nil {
		c.errors.WithLabelValues(errSourceNodeLabels)
	}
	return c
}

// Collectors returns the agent's self-metrics and the device exporter,
// which renders the last snapshot at every Collect.
func (c *Collector) Collectors() []prometheus.Collector {
	return append(c.selfCollectors(), c.exporter())
}

// selfCollectors returns the agent's self-metrics.
func (c *Collector) selfCollectors() []prometheus.Collector {
	return []prometheus.Collector{c.duration, c.lastSeconds, c.lastTime, c.errors, c.podsUp, c.devices}
}

// exporter returns the device exporter over the last snapshot.
func (c *Collector) exporter() exporter { return exporter{snap: c.snap.Load} }

// Snapshot returns the last snapshot, or nil before the first collection.
func (c *Collector) Snapshot() *Snapshot { return c.snap.Load() }

// Run collects now and then every interval until ctx ends.
func (c *Collector) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		c.CollectOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CollectOnce runs one collection: every source, then PodResources, then
// the node labels. Failures are logged when they start, change or end,
// counted, and never stop the rest.
func (c *Collector) CollectOnce(ctx context.Context) *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	log := klog.FromContext(ctx)
	start := time.Now()
	s := &Snapshot{Hostname: c.hostname, NodeLabels: map[string]string{}}
	counts := map[string]int{}
	for _, src := range c.sources {
		got, err := src.Collect(ctx)
		c.report(log, src.Name(), err, "Reading devices failed; serving what the source returned")
		s.Devices = append(s.Devices, got.Devices...)
		for k, v := range got.NodeLabels {
			s.NodeLabels[k] = v
		}
		for _, d := range got.Devices {
			counts[d.Vendor]++
		}
	}
	for v, n := range counts {
		c.devices.WithLabelValues(v).Set(float64(n))
	}
	if c.pods != nil {
		as, err := c.pods.List(ctx)
		c.report(log, errSourcePodResources, err, "Reading kubelet PodResources failed; serving metrics without pod labels")
		if err == nil {
			s.Owners = Owners(as)
			c.podsUp.Set(1)
		} else {
			c.podsUp.Set(0)
		}
	}
	s.Time = time.Now()
	c.snap.Store(s)
	elapsed := s.Time.Sub(start).Seconds()
	c.duration.Observe(elapsed)
	c.lastSeconds.Set(elapsed)
	c.lastTime.Set(float64(s.Time.UnixNano()) / 1e9)
	log.V(2).Info("Collected devices", "devices", len(s.Devices), "seconds", elapsed)
	if c.collected != nil {
		c.collected()
	}
	c.applyLabels(ctx, log, s.NodeLabels)
	return s
}

// applyLabels writes the node labels when they changed or the last write failed.
func (c *Collector) applyLabels(ctx context.Context, log logr.Logger, labels map[string]string) {
	if c.labels == nil || (!c.labelsDirty && c.applied != nil && maps.Equal(c.applied, labels)) {
		return
	}
	err := c.labels.Apply(ctx, labels)
	c.report(log, errSourceNodeLabels, err, "Applying node labels failed; will retry next collection")
	if err != nil {
		c.labelsDirty = true
		return
	}
	c.labelsDirty = false
	c.applied = labels
	log.Info("Applied node labels", "labels", sortedKeys(labels))
}

// report counts an error and logs when a source's error starts, changes
// or clears, so a persistent failure is one clear line, not one per cycle.
func (c *Collector) report(log logr.Logger, source string, err error, msg string) {
	prev, failing := c.lastErr[source]
	if err == nil {
		if failing {
			log.Info("Recovered", "source", source)
			delete(c.lastErr, source)
		}
		return
	}
	c.errors.WithLabelValues(source).Inc()
	if !failing || prev != err.Error() {
		log.Error(err, msg, "source", source)
	} else {
		log.V(2).Info(msg, "source", source, "err", err.Error())
	}
	c.lastErr[source] = err.Error()
}

// Close closes every source.
func (c *Collector) Close() error {
	var errs []error
	for _, s := range c.sources {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
