package nodeagent

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"
)

// staticPods is a PodLister whose assignments a test sets.
type staticPods struct {
	mu sync.Mutex
	as []Assignment
}

// List returns the assignments set last.
func (p *staticPods) List(context.Context) ([]Assignment, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.as, nil
}

// serve sends one GET for target with the headers to h and returns the
// response and its body, decoded when gzip; a gzip body must be exactly
// one gzip member, and a Content-Length must be the body's.
func serve(t *testing.T, h http.Handler, target string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	raw := rec.Body.Bytes()
	if cl := resp.Header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(raw)) {
		t.Errorf("Content-Length %s, body has %d bytes", cl, len(raw))
	}
	if resp.Header.Get("Content-Encoding") != "gzip" {
		return resp, raw
	}
	in := bytes.NewReader(raw)
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatalf("gzip header: %v", err)
	}
	zr.Multistream(false)
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gzip body: %v", err)
	}
	if in.Len() != 0 {
		t.Errorf("%d bytes after the first gzip member", in.Len())
	}
	return resp, body
}

// parse reads a text exposition, failing on any error.
func parse(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing the scrape: %v\n%.2000s", err, body)
	}
	return mfs
}

// chunks splits a text exposition into each family's text, by its HELP
// line, failing when a family appears twice.
func chunks(t *testing.T, body []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	name := ""
	for _, line := range strings.SplitAfter(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, _, _ = strings.Cut(rest, " ")
			if _, dup := out[name]; dup {
				t.Errorf("family %s appears twice", name)
			}
		}
		out[name] += line
	}
	return out
}

// runtimeFamily tells whether a family's values change between two
// gathers (Go runtime and process).
func runtimeFamily(name string) bool {
	return strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_")
}

// TestScrapeMatchesGather scrapes an agent on a simulated DGX A100 with
// MIG mixed and attributed pods, one container name needing escapes, and
// compares with what promhttp serves from one registry holding every
// collector, as the agent did: the same families, each once; device and
// agent families byte for byte, Go runtime and process families by name,
// help, type and labels.
func TestScrapeMatchesGather(t *testing.T) {
	ctx := context.Background()
	src, _ := newSimSource(t, "dgxa100-mig-mixed", "")
	pods := &staticPods{}
	a, err := New(ctx, Config{Sources: []Source{src}, PodLister: pods, NodeName: ""})
	if err != nil {
		t.Fatal(err)
	}
	first := a.Collector().CollectOnce(ctx)
	for i, d := range first.Devices[:4] {
		container := "main"
		if i == 1 {
			container = "we\"ird\\name\nx"
		}
		pods.as = append(pods.as, Assignment{Owner: Owner{Namespace: "ns", Pod: "pod-" + strconv.Itoa(i), Container: container}, DeviceIDs: []string{d.ID}})
	}
	pods.as = append(pods.as, Assignment{Owner: Owner{Namespace: "ns", Pod: "shared", Container: "main"}, DeviceIDs: []string{first.Devices[0].ID + "::1"}})
	a.Collector().CollectOnce(ctx)

	live := a.metrics.live.(*prometheus.Registry)
	devices := prometheus.NewRegistry()
	devices.MustRegister(a.Collector().exporter())
	// Registry: live makes promhttp register its own error counter, which
	// panics unless the agent's is the same family.
	ref := promhttp.HandlerFor(prometheus.Gatherers{live, devices}, promhttp.HandlerOpts{Registry: live})

	_, got := serve(t, a.Handler(), "/metrics", nil)
	_, want := serve(t, ref, "/metrics", nil)
	gotMFs, wantMFs := parse(t, got), parse(t, want)
	gotText, wantText := chunks(t, got), chunks(t, want)
	if len(gotMFs) != len(wantMFs) || len(gotText) != len(wantText) {
		t.Errorf("%d families (%d HELP lines), want %d (%d)", len(gotMFs), len(gotText), len(wantMFs), len(wantText))
	}
	for name, w := range wantMFs {
		g, ok := gotMFs[name]
		switch {
		case !ok:
			t.Errorf("family %s missing", name)
		case runtimeFamily(name):
			if g.GetHelp() != w.GetHelp() || g.GetType() != w.GetType() || labelNames(g) != labelNames(w) {
				t.Errorf("family %s: help, type or labels differ:\n%v\nwant\n%v", name, g, w)
			}
		case !proto.Equal(g, w) || gotText[name] != wantText[name]:
			t.Errorf("family %s differs:\n%s\nwant\n%s", name, gotText[name], wantText[name])
		}
	}
	if n := len(gotMFs["DCGM_FI_DEV_FB_USED"].GetMetric()); n < 33 {
		t.Errorf("%d DCGM_FI_DEV_FB_USED series, want one per device (33) at least", n)
	}
	if !strings.Contains(string(got), `container="we\"ird\\name\nx"`) {
		t.Errorf("scrape lacks the escaped container label")
	}
}

// labelNames lists the label names of a family's series.
func labelNames(mf *dto.MetricFamily) string {
	var b strings.Builder
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			b.WriteString(l.GetName() + ",")
		}
		b.WriteString(";")
	}
	return b.String()
}
