package nodeagent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// newMIGAgent returns an agent on a simulated DGX A100 with MIG mixed and
// one container on every device, collected once.
func newMIGAgent(tb testing.TB) *Agent {
	tb.Helper()
	src, _ := newSimSource(tb, "dgxa100-mig-mixed", "")
	pods := &staticPods{}
	a, err := New(context.Background(), Config{Sources: []Source{src}, PodLister: pods})
	if err != nil {
		tb.Fatal(err)
	}
	for i, d := range a.Collector().CollectOnce(context.Background()).Devices {
		pods.as = append(pods.as, Assignment{Owner: Owner{Namespace: "ns", Pod: "pod-" + strconv.Itoa(i), Container: "main"}, DeviceIDs: []string{d.ID}})
	}
	a.Collector().CollectOnce(context.Background())
	return a
}

// TestCollectionPreparesScrape: a collection leaves its snapshot encoded
// and compressed, so that the next scrape does neither.
func TestCollectionPreparesScrape(t *testing.T) {
	a := newMIGAgent(t)
	e := a.metrics.cache.Load()
	if e == nil || e.snap != a.Collector().Snapshot() || e.err != nil {
		t.Fatalf("after a collection the cache holds %+v, want the last snapshot encoded", e)
	}
	if len(e.body.text) == 0 || len(e.body.deflated) == 0 {
		t.Errorf("device text %d bytes, deflated %d: want both made", len(e.body.text), len(e.body.deflated))
	}
}

// BenchmarkScrape is one gzip scrape of a collected snapshot.
func BenchmarkScrape(b *testing.B) {
	h := newMIGAgent(b).Handler()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

// BenchmarkPrepare is the encoding and compression of one snapshot's
// device families, what a collection adds for scrapes.
func BenchmarkPrepare(b *testing.B) {
	a := newMIGAgent(b)
	snap := a.Collector().Snapshot()
	for b.Loop() {
		e := &encodedSnapshot{snap: snap}
		e.encode()
		e.body.deflate()
	}
}
