package router

import (
	"bytes"
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/accelstack/accelstack/pkg/serving/routerconfig"
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
	r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{{Name: "a", URL: up.URL, Weight: 100}}}, DefaultOptions())
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

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// TestProxyAllocations: proxying a small request on a kept connection
// makes few allocations, and allocates well under the 32 KiB copy buffer
// per request. The bytes are not bounded under the race detector, whose
// sync.Pool drops what it is given at random.
func TestProxyAllocations(t *testing.T) {
	up := cannedRelease(t, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 19\r\n\r\n"+`{"predictions":[1]}`)
	r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{{Name: "a", URL: up, Weight: 100}}}, DefaultOptions())
	const n = 200
	reqs := make([]*http.Request, n+1)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodPost, "http://mls/v1/models/m:predict", strings.NewReader(`{"instances":[[1]]}`))
	}
	w := &discard{h: http.Header{}}
	r.ServeHTTP(w, reqs[n]) // the first fills the pools
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, req := range reqs[:n] {
		clear(w.h)
		r.ServeHTTP(w, req)
	}
	runtime.ReadMemStats(&after)
	allocs, bytes := (after.Mallocs-before.Mallocs)/n, (after.TotalAlloc-before.TotalAlloc)/n
	t.Logf("%d allocations, %d bytes per request", allocs, bytes)
	if allocs > 40 {
		t.Errorf("%d allocations per request, want at most 40", allocs)
	}
	if !raceEnabled && bytes > 16<<10 {
		t.Errorf("%d bytes allocated per request, want under 16 KiB", bytes)
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
	r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{
		{Name: "a", Host: "mls-predict-a", URL: up.URL, Weight: 100},
		{Name: "b", Host: "mls-predict-b", URL: up.URL, Logger: &routerconfig.Logger{URLs: []string{s.srv.URL}}},
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

// cannedRelease returns the URL of a release that answers every request
// of a declared length with answer, allocating nothing per request.
func cannedRelease(t *testing.T, answer string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	serve := func(c net.Conn) {
		defer c.Close()
		buf, n := make([]byte, 64<<10), 0
		for {
			m, err := c.Read(buf[n:])
			if err != nil {
				return
			}
			n += m
			for {
				end := bytes.Index(buf[:n], []byte("\r\n\r\n"))
				if end < 0 {
					break
				}
				total := end + 4 + contentLength(buf[:end])
				if n < total {
					break
				}
				if _, err := io.WriteString(c, answer); err != nil {
					return
				}
				n = copy(buf, buf[total:n])
			}
		}
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return "http://" + l.Addr().String()
}

// contentLength reads the Content-Length of a request's head; 0 without.
func contentLength(head []byte) int {
	const key = "\r\nContent-Length: "
	i := bytes.Index(head, []byte(key))
	if i < 0 {
		return 0
	}
	n := 0
	for _, c := range head[i+len(key):] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}
