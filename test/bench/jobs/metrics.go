package main

import (
	"context"
	"fmt"
	"math"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The controller-runtime metrics the bench reads; both controllers are
// built on controller-runtime.
const (
	reconcileTimeMetric  = "controller_runtime_reconcile_time_seconds"
	reconcileTotalMetric = "controller_runtime_reconcile_total"
	workerCountMetric    = "controller_runtime_max_concurrent_reconciles"
	activeWorkersMetric  = "controller_runtime_active_workers"
)

// scrape reads the metrics at url.
func scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", url, err)
	}
	return mfs, nil
}

// of returns the metrics of family name that belong to controller.
func of(mfs map[string]*dto.MetricFamily, name, controller string) []*dto.Metric {
	var out []*dto.Metric
	if mf := mfs[name]; mf != nil {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					out = append(out, m)
				}
			}
		}
	}
	return out
}

// workerCount returns the number of workers of controller; 0 until it has
// registered.
func workerCount(mfs map[string]*dto.MetricFamily, controller string) int {
	for _, m := range of(mfs, workerCountMetric, controller) {
		return int(m.GetGauge().GetValue())
	}
	return 0
}

// reconcileCount returns how many reconciles controller has finished, of
// every result.
func reconcileCount(mfs map[string]*dto.MetricFamily, controller string) float64 {
	var n float64
	for _, m := range of(mfs, reconcileTotalMetric, controller) {
		n += m.GetCounter().GetValue()
	}
	return n
}

// histogram is a cumulative histogram: counts[i] observations were at most
// bounds[i] seconds.
type histogram struct {
	bounds []float64
	counts []uint64
	count  uint64
	sum    float64
}

// reconcileHistogram returns controller's reconcile times.
func reconcileHistogram(mfs map[string]*dto.MetricFamily, controller string) histogram {
	var h histogram
	for _, m := range of(mfs, reconcileTimeMetric, controller) {
		dh := m.GetHistogram()
		h.count, h.sum = dh.GetSampleCount(), dh.GetSampleSum()
		for _, b := range dh.GetBucket() {
			h.bounds = append(h.bounds, b.GetUpperBound())
			h.counts = append(h.counts, b.GetCumulativeCount())
		}
	}
	return h
}

// minus returns the observations of h that were not in before, an earlier
// snapshot of the same histogram.
func (h histogram) minus(before histogram) histogram {
	d := histogram{bounds: h.bounds, count: h.count - before.count, sum: h.sum - before.sum}
	for i, c := range h.counts {
		if i < len(before.counts) {
			c -= before.counts[i]
		}
		d.counts = append(d.counts, c)
	}
	return d
}

// quantileBound returns the upper bound of the bucket that holds the q
// quantile: the q quantile is at most that many seconds. It is +Inf beyond
// the last bucket and NaN without observations.
func (h histogram) quantileBound(q float64) float64 {
	if h.count == 0 {
		return math.NaN()
	}
	rank := q * float64(h.count)
	for i, c := range h.counts {
		if float64(c) >= rank {
			return h.bounds[i]
		}
	}
	return math.Inf(1)
}

// mean returns the mean observation in seconds.
func (h histogram) mean() float64 {
	if h.count == 0 {
		return math.NaN()
	}
	return h.sum / float64(h.count)
}

// activeWorkers returns how many of controller's workers are reconciling.
func activeWorkers(mfs map[string]*dto.MetricFamily, controller string) int {
	for _, m := range of(mfs, activeWorkersMetric, controller) {
		return int(m.GetGauge().GetValue())
	}
	return 0
}
