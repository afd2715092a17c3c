package nodeagent

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

// testSnapshot has two GPUs at temperature temp, the first shared by two
// containers.
func testSnapshot(temp float64) *Snapshot {
	s := &Snapshot{Hostname: "node-1", Owners: map[string][]Owner{"GPU-0": {{"ns", "a", "main"}, {"ns", "b", "main"}}}}
	for i := range 2 {
		d := Device{Vendor: accelerator.VendorNVIDIA, ID: "GPU-" + strconv.Itoa(i), Index: strconv.Itoa(i), Model: "Test GPU", Healthy: true}
		d.Set(FieldTemperatureCelsius, temp)
		d.Set(FieldPowerWatts, 100.5)
		s.Devices = append(s.Devices, d)
	}
	return s
}

// newTestHandler returns a metrics handler over snap with one live gauge,
// test_live, so that its responses are the same from scrape to scrape.
func newTestHandler(snap func() *Snapshot) *metricsHandler {
	live := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "test_live", Help: "A live gauge."})
	g.Set(7)
	live.MustRegister(g)
	return &metricsHandler{snap: snap, live: live, errors: newHandlerErrors()}
}

// temperatures returns the DCGM_FI_DEV_GPU_TEMP values of a body.
func temperatures(t *testing.T, body []byte) []float64 {
	t.Helper()
	var out []float64
	for _, m := range parse(t, body)["DCGM_FI_DEV_GPU_TEMP"].GetMetric() {
		out = append(out, m.GetGauge().GetValue())
	}
	return out
}

// TestScrapeNegotiation: every Accept and Accept-Encoding gets the text
// format, gzip exactly when accepted, with the same content.
func TestScrapeNegotiation(t *testing.T) {
	h := newTestHandler(func() *Snapshot { return testSnapshot(40) })
	_, plain := serve(t, h, "/metrics", nil)
	if got := temperatures(t, plain); len(got) != 3 || got[0] != 40 {
		t.Fatalf("temperatures %v, want three series at 40 (GPU 0 twice, GPU 1)", got)
	}
	testCases := []struct {
		accept, encoding string
		wantGzip         bool
	}{
		{encoding: "gzip", wantGzip: true},
		{encoding: "gzip;q=0"},
		{encoding: "identity"},
		{encoding: "br, *", wantGzip: true},
		{encoding: "deflate, gzip; q=0.5", wantGzip: true},
		{encoding: "*, gzip;q=0"},
		{accept: "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5", encoding: "gzip", wantGzip: true},
		{accept: "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"},
	}
	for _, tc := range testCases {
		t.Run(tc.accept+" "+tc.encoding, func(t *testing.T) {
			resp, body := serve(t, h, "/metrics", http.Header{"Accept": {tc.accept}, "Accept-Encoding": {tc.encoding}})
			if resp.Header.Get("Content-Length") == "" {
				t.Errorf("no Content-Length")
			}
			if ct := resp.Header.Get("Content-Type"); ct != contentType {
				t.Errorf("Content-Type %q, want %q", ct, contentType)
			}
			if gz := resp.Header.Get("Content-Encoding") == "gzip"; gz != tc.wantGzip {
				t.Errorf("gzip %v, want %v", gz, tc.wantGzip)
			}
			if string(body) != string(plain) {
				t.Errorf("body differs from the plain one:\n%s\nwant\n%s", body, plain)
			}
		})
	}
}

// TestScrapeFollowsSnapshots: a new snapshot changes what plain and gzip
// scrapes serve; scrapes of one snapshot share one encoding.
func TestScrapeFollowsSnapshots(t *testing.T) {
	var cur atomic.Pointer[Snapshot]
	cur.Store(testSnapshot(40))
	h := newTestHandler(cur.Load)
	gzip := http.Header{"Accept-Encoding": {"gzip"}}
	for _, temp := range []float64{40, 41, 39} {
		cur.Store(testSnapshot(temp))
		for _, header := range []http.Header{nil, gzip, gzip, nil} {
			if got := temperatures(t, mustServe(t, h, header)); len(got) != 3 || got[0] != temp || got[2] != temp {
				t.Errorf("temperatures %v, want 3 at %v", got, temp)
			}
		}
		if a, b := h.devices(), h.devices(); a != b || a.snap != cur.Load() {
			t.Errorf("two scrapes of one snapshot encoded it twice, or an old one")
		}
	}
}

// mustServe returns the decoded body of a 200 scrape of h.
func mustServe(t *testing.T, h http.Handler, header http.Header) []byte {
	t.Helper()
	resp, body := serve(t, h, "/metrics", header)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s: %s", resp.Status, body)
	}
	return body
}

// TestScrapeConcurrent scrapes from several goroutines while snapshots
// change: every response parses and holds one snapshot's values.
func TestScrapeConcurrent(t *testing.T) {
	var cur atomic.Pointer[Snapshot]
	cur.Store(testSnapshot(0))
	h := newTestHandler(cur.Load)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
				cur.Store(testSnapshot(float64(i)))
			}
		}
	})
	var scrapers sync.WaitGroup
	for g := range 6 {
		scrapers.Go(func() {
			for i := range 40 {
				header := http.Header{}
				if (g+i)%2 == 0 {
					header.Set("Accept-Encoding", "gzip")
				}
				got := temperatures(t, mustServe(t, h, header))
				if len(got) != 3 || got[0] != got[1] || got[1] != got[2] {
					t.Errorf("temperatures %v, want three of one snapshot", got)
				}
			}
		})
	}
	scrapers.Wait()
	close(stop)
	wg.Wait()
}

// TestScrapeNameFilter: name[] parameters select families, as promhttp.
func TestScrapeNameFilter(t *testing.T) {
	h := newTestHandler(func() *Snapshot { return testSnapshot(40) })
	for _, header := range []http.Header{nil, {"Accept-Encoding": {"gzip"}}} {
		mfs := parse(t, mustServe(t, h.withTarget("/metrics?name[]=DCGM_FI_DEV_GPU_TEMP&name[]=test_live"), header))
		if len(mfs) != 2 || mfs["DCGM_FI_DEV_GPU_TEMP"] == nil || mfs["test_live"] == nil {
			t.Errorf("families %v, want DCGM_FI_DEV_GPU_TEMP and test_live", mfs)
		}
	}
}

// withTarget serves h as if every request asked for target.
func (h *metricsHandler) withTarget(target string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2 := httptest.NewRequest(r.Method, target, nil)
		r2.Header = r.Header
		h.ServeHTTP(w, r2.WithContext(r.Context()))
	})
}

// TestScrapeErrors: a failed live or device gather is a 500 with the
// error, one log line and one count, as promhttp's errors counter.
func TestScrapeErrors(t *testing.T) {
	dup := testSnapshot(40)
	dup.Devices = append(dup.Devices, dup.Devices[1])
	testCases := []struct {
		name    string
		snap    *Snapshot
		live    prometheus.Gatherer
		wantErr string
	}{
		{name: "live", snap: testSnapshot(40), wantErr: "kaputt",
			live: prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return nil, errors.New("kaputt") })},
		{name: "device", snap: dup, wantErr: "gathering device metrics"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHandler(func() *Snapshot { return tc.snap })
			if tc.live != nil {
				h.live = tc.live
			}
			sink := &logSink{}
			ctx := ctxWithLog(sink)
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil).WithContext(ctx)
			req.Header.Set("Accept-Encoding", "gzip")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), tc.wantErr) {
				t.Errorf("status %d, body %q; want 500 with %q", rec.Code, rec.Body, tc.wantErr)
			}
			if rec.Header().Get("Content-Encoding") != "" {
				t.Errorf("error response has Content-Encoding %q", rec.Header().Get("Content-Encoding"))
			}
			if n := sink.count("Serving metrics failed"); n != 1 {
				t.Errorf("logged %d times, want once: %v", n, sink.lines)
			}
			var m dto.Metric
			if err := h.errors.WithLabelValues(causeGathering).Write(&m); err != nil || m.GetCounter().GetValue() != 1 {
				got := m.GetCounter().GetValue()
				t.Errorf("errors{cause=gathering} = %v, want 1", got)
			}
		})
	}
}

// TestScrapeGoClient: scrapes of the agent's handler through a real
// server decode with Go's client, gzip included, and carry the build info.
func TestScrapeGoClient(t *testing.T) {
	a, err := New(context.Background(), Config{Sources: []Source{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !resp.Uncompressed {
		t.Errorf("Go's client got no gzip response")
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if mfs := parse(t, body); mfs["accelstack_build_info"] == nil || mfs["go_goroutines"] == nil {
		t.Errorf("scrape lacks build info or Go families:\n%.500s", body)
	}
}
