package nodeagent

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"k8s.io/klog/v2"
)

// contentType is what /metrics serves whatever the Accept header asks for,
// OpenMetrics and protobuf included: the text format 0.0.4, which every
// Prometheus-compatible scraper reads, choosing its parser by the
// response's Content-Type.
const contentType = string(expfmt.FmtText)

// Causes of promhttp_metric_handler_errors_total, as promhttp names them.
const (
	causeGathering = "gathering"
	causeEncoding  = "encoding"
)

// newHandlerErrors returns the error counter promhttp keeps, with its
// name, help and causes, so that the series stays as it was.
func newHandlerErrors() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "promhttp_metric_handler_errors_total",
		Help: "Total number of internal errors encountered by the promhttp metric handler.",
	}, []string{"cause"})
	c.WithLabelValues(causeGathering)
	c.WithLabelValues(causeEncoding)
	return c
}

// bufPool holds the buffers of the per-scrape part of responses.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// metricsHandler serves /metrics: the device families of the last
// snapshot, encoded and compressed once per snapshot right after its
// collection, then the live families (the agent's own, Go runtime and
// process), gathered and encoded at each scrape. The two sets of names are
// disjoint, so each family appears once.
type metricsHandler struct {
	snap   func() *Snapshot
	live   prometheus.Gatherer
	errors *prometheus.CounterVec
	cache  atomic.Pointer[encodedSnapshot]
}

// encodedSnapshot is one snapshot's device families in the text format.
type encodedSnapshot struct {
	snap     *Snapshot
	once     sync.Once
	body     *block
	families []familySpan
	cause    string
	err      error
}

// familySpan is one family's name and its bytes in encodedSnapshot.body.
type familySpan struct {
	name       string
	start, end int
}

// ServeHTTP writes the device text and the live families, as one gzip
// member when the client accepts gzip. A failed gather or encoding is
// logged, counted and answered with status 500, as promhttp does.
func (h *metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := klog.FromContext(r.Context())
	dev := h.devices()
	if dev.err != nil {
		h.fail(w, log, dev.cause, dev.err)
		return
	}
	mfs, err := h.live.Gather()
	if err != nil {
		h.fail(w, log, causeGathering, fmt.Errorf("gathering live metrics: %w", err))
		return
	}
	names := nameFilter(r)
	head := dev.body
	if names != nil {
		head = dev.only(names)
	}
	live := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(live)
	live.Reset()
	if err := encodeText(live, mfs, names); err != nil {
		h.fail(w, log, causeEncoding, err)
		return
	}
	parts := [][]byte{head.text, live.Bytes()}
	hdr := w.Header()
	hdr.Set("Content-Type", contentType)
	hdr.Add("Vary", "Accept")
	hdr.Add("Vary", "Accept-Encoding")
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		tail := bufPool.Get().(*bytes.Buffer)
		defer bufPool.Put(tail)
		tail.Reset()
		hdr.Set("Content-Encoding", "gzip")
		parts = gzipMember(head, live.Bytes(), tail)
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	hdr.Set("Content-Length", strconv.Itoa(n))
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			h.errors.WithLabelValues(causeEncoding).Inc()
			log.V(2).Info("Writing the metrics response failed", "err", err.Error())
			return
		}
	}
}

// fail counts and logs err and answers 500 with it.
func (h *metricsHandler) fail(w http.ResponseWriter, log klog.Logger, cause string, err error) {
	h.errors.WithLabelValues(cause).Inc()
	log.Error(err, "Serving metrics failed", "cause", cause)
	http.Error(w, "An error has occurred while serving metrics:\n\n"+err.Error(), http.StatusInternalServerError)
}

// prepare encodes and compresses the last snapshot's device families, so
// that scrapes pay for neither; the collector calls it after collecting.
func (h *metricsHandler) prepare() {
	if e := h.devices(); e.err == nil {
		e.body.deflate()
	}
}

// devices returns the last snapshot's device families, encoding them if
// prepare has not; concurrent callers for one snapshot share one encoding.
func (h *metricsHandler) devices() *encodedSnapshot {
	for {
		s, e := h.snap(), h.cache.Load()
		if e == nil || e.snap != s {
			n := &encodedSnapshot{snap: s}
			if !h.cache.CompareAndSwap(e, n) {
				continue
			}
			e = n
		}
		e.once.Do(e.encode)
		return e
	}
}

// encode gathers the snapshot's device families from a registry of their
// own, sorted and checked as any Gather, and writes them with expfmt's
// text encoder, as promhttp would.
func (e *encodedSnapshot) encode() {
	s := e.snap
	reg := prometheus.NewRegistry()
	if err := reg.Register(exporter{snap: func() *Snapshot { return s }}); err != nil {
		e.cause, e.err = causeGathering, fmt.Errorf("registering the device exporter: %w", err)
		return
	}
	mfs, err := reg.Gather()
	if err != nil {
		e.cause, e.err = causeGathering, fmt.Errorf("gathering device metrics: %w", err)
		return
	}
	var buf bytes.Buffer
	for _, mf := range mfs {
		start := buf.Len()
		if err := encodeText(&buf, []*dto.MetricFamily{mf}, nil); err != nil {
			e.cause, e.err = causeEncoding, err
			return
		}
		e.families = append(e.families, familySpan{name: mf.GetName(), start: start, end: buf.Len()})
	}
	e.body = &block{text: buf.Bytes()}
}

// only returns the text of the families named in names.
func (e *encodedSnapshot) only(names map[string]bool) *block {
	var text []byte
	for _, f := range e.families {
		if names[f.name] {
			text = append(text, e.body.text[f.start:f.end]...)
		}
	}
	return &block{text: text}
}

// encodeText writes the families in the text format, only those in names
// when names is not nil.
func encodeText(w io.Writer, mfs []*dto.MetricFamily, names map[string]bool) error {
	enc := expfmt.NewEncoder(w, expfmt.FmtText)
	for _, mf := range mfs {
		if names != nil && !names[mf.GetName()] {
			continue
		}
		if err := enc.Encode(mf); err != nil {
			return fmt.Errorf("encoding %s: %w", mf.GetName(), err)
		}
	}
	return nil
}

// nameFilter returns the families a request asks for with name[]
// parameters, as promhttp accepts, or nil for all.
func nameFilter(r *http.Request) map[string]bool {
	if r.URL == nil || r.URL.RawQuery == "" {
		return nil
	}
	list := r.URL.Query()["name[]"]
	if len(list) == 0 {
		return nil
	}
	names := make(map[string]bool, len(list))
	for _, n := range list {
		names[n] = true
	}
	return names
}

// acceptsGzip tells whether an Accept-Encoding value admits gzip: named
// with a non-zero weight, or through "*" when it is not named.
func acceptsGzip(header string) bool {
	star := false
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(p, "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(coding)) {
		case "gzip", "x-gzip":
			return q > 0
		case "*":
			star = q > 0
		}
	}
	return star
}
