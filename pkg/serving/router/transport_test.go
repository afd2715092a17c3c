package router

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestAcceptEncoding: the model server sees the client's Accept-Encoding,
// none when the client sent none, and a gzipped response reaches a client
// that asked for one as it was sent.
func TestAcceptEncoding(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Accept-Encoding"))
		mu.Unlock()
		if r.Header.Get("Accept-Encoding") == "gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			z := gzip.NewWriter(w)
			_, _ = io.WriteString(z, "zipped")
			_ = z.Close()
			return
		}
		_, _ = io.WriteString(w, "plain")
	}))
	t.Cleanup(up.Close)
	r := newRouter(t, &Config{Name: "mls", Releases: []Target{{Name: "a", URL: up.URL, Weight: 100}}}, DefaultOptions())
	if _, body := do(t, r, "mls", "/", "", nil); body != "plain" {
		t.Errorf("without Accept-Encoding: body %q, want plain", body)
	}
	req := httptest.NewRequest(http.MethodGet, "http://mls/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	if got := w.Header().Get("Content-Encoding"); got != "gzip" {
		t.Fatalf("with Accept-Encoding gzip: Content-Encoding %q", got)
	}
	z, err := gzip.NewReader(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(z); string(b) != "zipped" {
		t.Errorf("with Accept-Encoding gzip: body %q", b)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != "" || seen[1] != "gzip" {
		t.Errorf("the model server saw Accept-Encoding %q, want [\"\" gzip]", seen)
	}
}

// fixedTransport answers every request with body at once.
type fixedTransport struct{ body []byte }

func (f fixedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(f.body)), ContentLength: int64(len(f.body)), Request: req}, nil
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// TestProxyAllocations: proxying a small request allocates well under the
// 32 KiB copy buffer per request; the buffers are pooled.
func TestProxyAllocations(t *testing.T) {
	r := newRouter(t, &Config{Name: "mls", Releases: []Target{{Name: "a", URL: "http://model", Weight: 100}}}, DefaultOptions())
	r.split[0].proxy.Transport = fixedTransport{body: []byte(`{"predictions":[1]}`)}
	const n = 200
	reqs := make([]*http.Request, n+1)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodPost, "http://mls/v1/models/m:predict", strings.NewReader(`{"instances":[[1]]}`))
	}
	w := &discard{h: http.Header{}}
	r.ServeHTTP(w, reqs[n]) // the first fills the pool
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, req := range reqs[:n] {
		clear(w.h)
		r.ServeHTTP(w, req)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 16<<10 {
		t.Errorf("%d bytes allocated per request, want under 16 KiB", per)
	}
}

// TestLargeBodies: bodies larger than the copy buffers, proxied at once by
// several clients, arrive whole and unmixed, and so do their events.
func TestLargeBodies(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(bytes.ToUpper(b))
	}))
	t.Cleanup(up.Close)
	s := newSink(t, nil)
	r := newRouter(t, &Config{Name: "mls", Releases: []Target{
		{Name: "a", Host: "mls-predict-a", URL: up.URL, Weight: 100},
		{Name: "b", Host: "mls-predict-b", URL: up.URL, Logger: &Logger{URLs: []string{s.srv.URL}}},
	}}, DefaultOptions())
	const clients, each = 6, 5
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				body := strings.Repeat(string(rune('a'+c)), 100<<10+i*4099)
				for _, host := range []string{"mls-predict-a", "mls-predict-b"} {
					if code, got := do(t, r, host, "/", body, nil); code != http.StatusOK || got != strings.ToUpper(body) {
						t.Errorf("%s: client %d request %d: code %d, %d bytes back for %d", host, c, i, code, len(got), len(body))
					}
				}
			}
		})
	}
	wg.Wait()
	got := s.wait(t, 2*clients*each)
	if len(got) != 2*clients*each {
		t.Fatalf("%d events, want %d", len(got), 2*clients*each)
	}
	bodies := map[string]map[string]string{}
	for _, e := range got {
		id := e.Headers["ce-id"]
		if bodies[id] == nil {
			bodies[id] = map[string]string{}
		}
		bodies[id][e.Headers["ce-type"]] = e.Body
	}
	for id, b := range bodies {
		req, resp := b[TypeRequest], b[TypeResponse]
		if len(req) < 100<<10 || strings.Trim(req, req[:1]) != "" || resp != strings.ToUpper(req) {
			t.Errorf("event %s: request of %d bytes, response of %d, not one body and its answer", id, len(req), len(resp))
		}
	}
}

func TestHostLabel(t *testing.T) {
	for host, want := range map[string]string{
		"mls":                                "mls",
		"mls:8080":                           "mls",
		"mls.ns":                             "mls",
		"mls-predict-a.ns.svc.cluster.local": "mls-predict-a",
		"mls-predict-a.ns.svc:80":            "mls-predict-a",
		"10.0.0.1:80":                        "10",
		"[::1]:8080":                         "::1",
		"[::1]":                              "[::1]",
		"":                                   "",
	} {
		if got := hostLabel(host); got != want {
			t.Errorf("hostLabel(%q) = %q, want %q", host, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { hostLabel("mls.ns.svc.cluster.local") }); n != 0 {
		t.Errorf("hostLabel allocates %v times", n)
	}
}

func TestReadBody(t *testing.T) {
	const max = 1000
	for _, tc := range []struct {
		name     string
		body     int
		declared int64
		want     int
	}{
		{"empty", 0, 0, 0},
		{"declared", 700, 700, 700},
		{"unknown size", 700, -1, 700},
		{"declared too small", 700, 10, 700},
		{"declared too large", 700, 900, 700},
		{"at the limit", max, max, max},
		{"over the limit", 3000, 3000, max + 1},
		{"over the limit, unknown size", 3000, -1, max + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := bytes.Repeat([]byte("x"), tc.body)
			got, err := readBody(bytes.NewReader(body), tc.declared, max)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || !bytes.Equal(got, body[:tc.want]) {
				t.Errorf("read %d bytes, want %d", len(got), tc.want)
			}
		})
	}
	// A declared size is read in one buffer: one allocation.
	body := bytes.Repeat([]byte("x"), 64<<10)
	rd := bytes.NewReader(body)
	if n := testing.AllocsPerRun(20, func() {
		rd.Reset(body)
		_, _ = readBody(rd, int64(len(body)), 4<<20)
	}); n != 1 {
		t.Errorf("reading a declared body of 64 KiB allocates %v times, want 1", n)
	}
}

// trackedBody is a request body that records whether it was read to EOF.
type trackedBody struct {
	io.Reader
	eof bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

func (b *trackedBody) Close() error { return nil }

// aheadTransport records whether the client's body was read whole before
// the request went out, whether the body that went out is in memory (the
// transport sends it with the headers), and that body.
type aheadTransport struct {
	client   *trackedBody
	ahead    bool
	inMemory bool
	sent     []byte
}

func (a *aheadTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	a.ahead = a.client.eof
	a.inMemory = reflect.TypeOf(req.Body) == reflect.TypeOf(io.NopCloser(&bytes.Reader{}))
	a.sent, _ = io.ReadAll(req.Body)
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// TestBodyAhead: a small request body of a declared size is read whole
// before the request goes to the release, so that it goes out with its
// headers in one write; large bodies and bodies of unknown size stream.
// Whatever the case, the release gets the whole body.
func TestBodyAhead(t *testing.T) {
	small, large := strings.Repeat("s", 1000), strings.Repeat("l", maxBufferedBody+1)
	for _, tc := range []struct {
		name      string
		logger    *Logger
		body      string
		declared  int64
		wantAhead bool
	}{
		{"small", nil, small, 1000, true},
		{"at the bound", nil, large[:maxBufferedBody], maxBufferedBody, true},
		{"large", nil, large, int64(len(large)), false},
		{"unknown size", nil, small, -1, false},
		{"longer than declared", nil, small, 10, true},
		{"small, logger mode response", &Logger{URLs: []string{"http://sink"}, Mode: ModeResponse}, small, 1000, true},
		{"small, logger mode all", &Logger{URLs: []string{"http://sink"}}, small, 1000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRouter(t, &Config{Name: "mls", Releases: []Target{{Name: "a", URL: "http://model", Weight: 100, Logger: tc.logger}}}, DefaultOptions())
			body := &trackedBody{Reader: strings.NewReader(tc.body)}
			tr := &aheadTransport{client: body}
			r.split[0].proxy.Transport.(*bodyBuffering).next = tr
			req := httptest.NewRequest(http.MethodPost, "http://mls/", nil)
			req.Body, req.ContentLength = body, tc.declared
			r.ServeHTTP(&discard{h: http.Header{}}, req)
			if tr.ahead != tc.wantAhead {
				t.Errorf("body read ahead: %v, want %v", tr.ahead, tc.wantAhead)
			}
			if want := tc.wantAhead && tc.name != "longer than declared"; tr.inMemory != want {
				t.Errorf("body in memory: %v, want %v", tr.inMemory, want)
			}
			if string(tr.sent) != tc.body {
				t.Errorf("the release got %d bytes, want %d", len(tr.sent), len(tc.body))
			}
		})
	}
}
