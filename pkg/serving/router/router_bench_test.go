package router

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/accelstack/accelstack/pkg/serving/routerconfig"
)

// benchBody is a small prediction request, as a model server gets them.
var benchBody = []byte(`{"instances":[[0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8]]}`)

// BenchmarkServeHTTP is the router's cost per request: ServeHTTP proxying
// to an upstream on loopback that answers at once, logger off and on (mode
// all, to a sink on loopback). The upstream's own cost is in the figures;
// roundtrip, the same request sent by a bare http.Transport, is the part
// of it no proxy can avoid.
func BenchmarkServeHTTP(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"predictions":[3.6]}`))
	}))
	b.Cleanup(up.Close)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	b.Cleanup(sink.Close)
	b.Run("roundtrip", func(b *testing.B) {
		tr := &http.Transport{MaxIdleConnsPerHost: 256}
		b.Cleanup(tr.CloseIdleConnections)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req, _ := http.NewRequest(http.MethodPost, up.URL+"/v1/models/m:predict", bytes.NewReader(benchBody))
				req.Header.Set("Content-Type", "application/json")
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	})
	for name, logger := range map[string]*routerconfig.Logger{"logger=off": nil, "logger=on": {URLs: []string{sink.URL}}} {
		b.Run(name, func(b *testing.B) {
			ctx := b.Context()
			r, err := New(ctx, &routerconfig.Config{Name: "mls", Namespace: "ns", Releases: []routerconfig.Target{
				{Name: "a", Host: "mls-predict-a", URL: up.URL, Weight: 100, Logger: logger},
			}}, DefaultOptions())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					serveOne(b, r)
				}
			})
		})
	}
}

// serveOne sends benchBody to h as a prediction request.
func serveOne(b *testing.B, h http.Handler) {
	req := httptest.NewRequest(http.MethodPost, "http://mls.ns.svc.cluster.local/v1/models/m:predict", bytes.NewReader(benchBody))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		b.Fatalf("code %d", w.Code)
	}
}
