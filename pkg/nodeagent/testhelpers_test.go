package nodeagent

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/nvidia"
	"github.com/accelstack/accelstack/pkg/nvidia/simulator"
)

// series is one gathered sample: its family, labels and value.
type series struct {
	name   string
	labels map[string]string
	value  float64
}

// gather renders the collector's families as series, skipping empty labels.
func gather(t *testing.T, c *Collector) []series {
	t.Helper()
	reg := prometheus.NewRegistry()
	for _, col := range c.Collectors() {
		reg.MustRegister(col)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gathering: %v", err)
	}
	var out []series
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			s := series{name: mf.GetName(), labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				if l.GetValue() != "" {
					s.labels[l.GetName()] = l.GetValue()
				}
			}
			switch {
			case m.Gauge != nil:
				s.value = m.GetGauge().GetValue()
			case m.Counter != nil:
				s.value = m.GetCounter().GetValue()
			}
			out = append(out, s)
		}
	}
	return out
}

// find returns the series of a family whose labels include want.
func find(all []series, name string, want map[string]string) []series {
	var out []series
	for _, s := range all {
		if s.name != name {
			continue
		}
		ok := true
		for k, v := range want {
			ok = ok && s.labels[k] == v
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// podsOf lists namespace/pod/container of series.
func podsOf(ss []series) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.labels["namespace"]+"/"+s.labels["pod"]+"/"+s.labels["container"])
	}
	sort.Strings(out)
	return out
}

// logSink records log lines for assertions.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		l.lines = append(l.lines, prefix+" "+args)
		l.mu.Unlock()
	}, funcr.Options{Verbosity: 0})
}

// count returns how many lines contain s.
func (l *logSink) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// newSimSource returns an NVIDIA source on a simulated profile.
func newSimSource(t testing.TB, profile, configFile string) (*NVIDIASource, *simulator.Simulator) {
	t.Helper()
	sim, err := simulator.New(profile)
	if err != nil {
		t.Fatal(err)
	}
	o := nvidia.DefaultOptions()
	o.Backend, o.ConfigFile = "simulated", configFile
	src, err := NewNVIDIASource(context.Background(), o, sim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src, sim
}

// ctxWithLog returns a context whose klog logger writes to sink.
func ctxWithLog(sink *logSink) context.Context {
	return klog.NewContext(context.Background(), sink.logger())
}
