package router

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/accelstack/accelstack/pkg/serving/routerconfig"
)

// upstream returns a server answering "<name>:<body>".
func upstream(t *testing.T, name string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, name+":"+string(b))
	}))
	t.Cleanup(s.Close)
	return s
}

// newRouter returns a router for cfg whose logger stops with the test.
func newRouter(t *testing.T, cfg *routerconfig.Config, opts Options) *Router {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r, err := New(ctx, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// do sends body to r with host and returns the response body.
func do(t *testing.T, r http.Handler, host, path, body string, header http.Header) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://"+host+path, strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	return w.Code, w.Body.String()
}

func TestWeights(t *testing.T) {
	a, b := upstream(t, "a"), upstream(t, "b")
	r := newRouter(t, &routerconfig.Config{Name: "mls", Namespace: "ns", Releases: []routerconfig.Target{
		{Name: "a", Host: "mls-predict-a", URL: a.URL, Weight: 80},
		{Name: "b", Host: "mls-predict-b", URL: b.URL, Weight: 20},
		{Name: "c", Host: "mls-predict-c", URL: b.URL},
	}}, DefaultOptions())
	const n = 2000
	counts := map[string]int{}
	for range n {
		_, body := do(t, r, "mls.ns.svc.cluster.local", "/", "", nil)
		counts[body[:1]]++
	}
	// Within 4.5 standard deviations of the binomial mean.
	bound := 4.5 * math.Sqrt(n*0.8*0.2)
	if d := math.Abs(float64(counts["a"]) - 0.8*n); d > bound || counts["a"]+counts["b"] != n {
		t.Errorf("split %v, want a=%v±%.0f", counts, 0.8*n, bound)
	}
	for host, want := range map[string]string{"mls-predict-b.ns.svc.cluster.local:80": "b", "mls-predict-c": "b", "mls-predict-a.ns": "a"} {
		if _, body := do(t, r, host, "/", "x", nil); body != want+":x" {
			t.Errorf("host %s: got %q, want %s", host, body, want)
		}
	}
}

func TestTransformer(t *testing.T) {
	a, tr := upstream(t, "a"), upstream(t, "t")
	r := newRouter(t, &routerconfig.Config{Name: "mls", Namespace: "ns", PredictHost: "mls-predict",
		Releases:    []routerconfig.Target{{Name: "a", Host: "mls-predict-a", URL: a.URL, Weight: 100}},
		Transformer: &routerconfig.Target{URL: tr.URL},
	}, DefaultOptions())
	for host, want := range map[string]string{"mls.ns": "t:", "mls-predict.ns": "a:", "mls-predict-a": "a:"} {
		if _, body := do(t, r, host, "/", "", nil); body != want {
			t.Errorf("host %s: got %q, want %q", host, body, want)
		}
	}
}

func TestNoWeight(t *testing.T) {
	a := upstream(t, "a")
	r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{{Name: "a", Host: "mls-predict-a", URL: a.URL}}}, DefaultOptions())
	if code, _ := do(t, r, "mls", "/", "", nil); code != http.StatusServiceUnavailable {
		t.Errorf("code %d", code)
	}
}

// received is an event as a sink saw it.
type received struct {
	Headers map[string]string
	Body    string
}

// sink is a logger URL recording what it receives.
type sink struct {
	mu     sync.Mutex
	events []received
	srv    *httptest.Server
}

func newSink(t *testing.T, hang <-chan struct{}) *sink {
	s := &sink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang != nil {
			<-hang
		}
		b, _ := io.ReadAll(r.Body)
		h := map[string]string{}
		for k := range r.Header {
			if strings.HasPrefix(strings.ToLower(k), "ce-") || k == "Content-Type" {
				h[strings.ToLower(k)] = r.Header.Get(k)
			}
		}
		s.mu.Lock()
		s.events = append(s.events, received{Headers: h, Body: string(b)})
		s.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) wait(t *testing.T, n int) []received {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		got := append([]received(nil), s.events...)
		s.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLoggerEvents(t *testing.T) {
	a := upstream(t, "a")
	s1, s2 := newSink(t, nil), newSink(t, nil)
	r := newRouter(t, &routerconfig.Config{Name: "mls", Namespace: "ns", Releases: []routerconfig.Target{
		{Name: "a", Host: "mls-predict-a", URL: a.URL, Weight: 100, Logger: &routerconfig.Logger{URLs: []string{s1.srv.URL, s2.srv.URL}}},
	}}, DefaultOptions())
	header := http.Header{"Content-Type": {"application/json"}, "Traceparent": {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}
	if _, body := do(t, r, "mls.ns", "/v1/models/m:predict", `{"instances":[1]}`, header); body != `a:{"instances":[1]}` {
		t.Fatalf("response %q", body)
	}
	for _, s := range []*sink{s1, s2} {
		got := s.wait(t, 2)
		if len(got) != 2 {
			t.Fatalf("events %+v", got)
		}
		byType := map[string]received{}
		for _, e := range got {
			byType[e.Headers["ce-type"]] = e
		}
		req, resp := byType[TypeRequest], byType[TypeResponse]
		if req.Headers["ce-id"] == "" || req.Headers["ce-id"] != resp.Headers["ce-id"] {
			t.Errorf("ids %q %q", req.Headers["ce-id"], resp.Headers["ce-id"])
		}
		want := map[string]string{
			"ce-specversion": "1.0", "ce-type": TypeRequest, "ce-source": "mls-predict-a", "ce-component": "predict",
			"ce-inferenceurl": "/v1/models/m:predict", "ce-mlservicename": "mls", "ce-namespace": "ns",
			"ce-traceparent": header.Get("Traceparent"), "content-type": "application/json",
			"ce-id": req.Headers["ce-id"], "ce-time": req.Headers["ce-time"],
		}
		if diff := cmp.Diff(want, req.Headers); diff != "" {
			t.Errorf("request headers (-want +got):\n%s", diff)
		}
		if req.Body != `{"instances":[1]}` || resp.Body != `a:{"instances":[1]}` {
			t.Errorf("bodies %q %q", req.Body, resp.Body)
		}
		if resp.Headers["ce-source"] != "mls-predict-a" || resp.Headers["ce-type"] != TypeResponse {
			t.Errorf("response headers %v", resp.Headers)
		}
	}
}

func TestLoggerModes(t *testing.T) {
	a := upstream(t, "a")
	for mode, want := range map[string]string{routerconfig.ModeRequest: TypeRequest, routerconfig.ModeResponse: TypeResponse} {
		s := newSink(t, nil)
		r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{
			{Name: "a", URL: a.URL, Weight: 100, Logger: &routerconfig.Logger{URLs: []string{s.srv.URL}, Mode: mode}},
		}}, DefaultOptions())
		do(t, r, "mls", "/", "x", nil)
		time.Sleep(200 * time.Millisecond)
		got := s.wait(t, 1)
		if len(got) != 1 || got[0].Headers["ce-type"] != want {
			t.Errorf("mode %s: events %+v", mode, got)
		}
	}
}

// TestBackpressure: a sink that hangs neither slows the responses nor
// grows the queue past its bound; the events it cannot take are dropped
// and counted, and a healthy sink beside it still gets every event.
func TestBackpressure(t *testing.T) {
	a := upstream(t, "a")
	hang := make(chan struct{})
	defer close(hang)
	slow, healthy := newSink(t, hang), newSink(t, nil)
	opts := DefaultOptions()
	opts.QueueSize, opts.Workers, opts.SendTimeout = 8, 1, time.Minute
	r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{
		{Name: "a", URL: a.URL, Weight: 100, Logger: &routerconfig.Logger{URLs: []string{slow.srv.URL, healthy.srv.URL}}},
	}}, opts)
	const n = 200
	var proxying time.Duration
	for i := range n {
		start := time.Now()
		if code, _ := do(t, r, "mls", "/", "x", nil); code != http.StatusOK {
			t.Fatalf("code %d", code)
		}
		proxying += time.Since(start)
		// Paced by the healthy sink, whose queue then never fills.
		if got := healthy.wait(t, 2*(i+1)); len(got) != 2*(i+1) {
			t.Fatalf("the healthy sink got %d events, want %d", len(got), 2*(i+1))
		}
	}
	if proxying > 5*time.Second {
		t.Errorf("%d requests took %s behind a hanging sink", n, proxying)
	}
	// The hanging sink holds one event in its worker and the queue's 8.
	if st := r.Stats(); st.Dropped != 2*n-1-8 {
		t.Errorf("stats %+v, want %d dropped", st, 2*n-1-8)
	}
}

// TestQueuedBytes: behind a hanging sink, the events waiting for it hold
// at most MaxQueuedBytes of bodies, however many slots the queue has.
func TestQueuedBytes(t *testing.T) {
	a := upstream(t, "a")
	hang := make(chan struct{})
	defer close(hang)
	slow := newSink(t, hang)
	opts := DefaultOptions()
	opts.QueueSize, opts.Workers, opts.SendTimeout, opts.MaxQueuedBytes = 1000, 1, time.Minute, 10<<10
	r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{
		{Name: "a", URL: a.URL, Weight: 100, Logger: &routerconfig.Logger{URLs: []string{slow.srv.URL}, Mode: routerconfig.ModeRequest}},
	}}, opts)
	body := strings.Repeat("x", 1<<10)
	const n = 50
	for range n {
		if code, _ := do(t, r, "mls", "/", body, nil); code != http.StatusOK {
			t.Fatalf("code %d", code)
		}
	}
	// 10 KiB hold 10 bodies of 1 KiB, the worker at most one more.
	if st := r.Stats(); st.Dropped < n-11 || st.Dropped > n-10 {
		t.Errorf("stats %+v, want %d or %d dropped", st, n-11, n-10)
	}
}
