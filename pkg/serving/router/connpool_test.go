package router

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/accelstack/accelstack/pkg/serving/routerconfig"
)

// seen is what a release received.
type seen struct {
	method, uri, host, body string
	header                  http.Header
}

// connCounts counts a server's connections.
type connCounts struct{ opened, closed atomic.Int64 }

// startCounting starts s, counting its connections.
func startCounting(t *testing.T, s *httptest.Server) *connCounts {
	var c connCounts
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			c.opened.Add(1)
		case http.StateClosed:
			c.closed.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return &c
}

// recorder returns a release that records its requests, answers "ok",
// and counts its connections.
func recorder(t *testing.T, configure func(*http.Server)) (*httptest.Server, func() []seen, *connCounts) {
	var mu sync.Mutex
	var got []seen
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.RequestURI, r.Host, string(b), r.Header.Clone()})
		mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}))
	if configure != nil {
		configure(s.Config)
	}
	conns := startCounting(t, s)
	return s, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), got...)
	}, conns
}

// TestForwardedAsTheReverseProxy: a request the pool sends in one piece
// reaches the release as httputil.ReverseProxy sends one of unknown size:
// the same method, URI on the release's path, Host, X-Forwarded-For,
// headers without the hop-by-hop ones, and body.
func TestForwardedAsTheReverseProxy(t *testing.T) {
	up, got, _ := recorder(t, nil)
	r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{{Name: "a", URL: up.URL + "/base", Weight: 100}}}, DefaultOptions())
	send := func(declared bool) {
		req := httptest.NewRequest(http.MethodPost, "http://mls.ns/v1/models/a%2Fb:predict?verbose=1", strings.NewReader(`{"instances":[[1]]}`))
		if !declared {
			req.ContentLength = -1
		}
		req.RemoteAddr = "10.1.2.3:4567"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", "192.0.2.1")
		req.Header.Set("Connection", "keep-alive, X-Hop")
		req.Header.Set("X-Hop", "dropped")
		req.Header.Set("Keep-Alive", "timeout=5")
		req.Header.Set("Proxy-Authorization", "Basic secret")
		req.Header.Set("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusOK || w.Body.String() != "ok" {
			t.Fatalf("declared %v: %d %q", declared, w.Code, w.Body)
		}
	}
	send(true)
	send(false)
	g := got()
	if len(g) != 2 {
		t.Fatalf("the release got %d requests, want 2", len(g))
	}
	fast, slow := g[0], g[1]
	for _, s := range []*seen{&fast, &slow} {
		delete(s.header, "Content-Length")
		delete(s.header, "Transfer-Encoding")
		delete(s.header, "Accept-Encoding")
	}
	if diff := cmp.Diff(slow, fast, cmp.AllowUnexported(seen{})); diff != "" {
		t.Errorf("in one piece vs through the reverse proxy (-proxy +pool):\n%s", diff)
	}
	want := seen{method: http.MethodPost, uri: "/base/v1/models/a%2Fb:predict?verbose=1", host: "mls.ns", body: `{"instances":[[1]]}`,
		header: http.Header{"Content-Type": {"application/json"}, "X-Forwarded-For": {"192.0.2.1, 10.1.2.3"},
			"Traceparent": {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}
	if diff := cmp.Diff(want, fast, cmp.AllowUnexported(seen{})); diff != "" {
		t.Errorf("the release got (-want +got):\n%s", diff)
	}
}

// TestConnectionsKept: sequential requests share one connection; one the
// release closed while idle is found closed and replaced, not answered
// with 502; an answer with Connection: close is not followed by another
// request on its connection.
func TestConnectionsKept(t *testing.T) {
	up, got, conns := recorder(t, func(s *http.Server) { s.IdleTimeout = 50 * time.Millisecond })
	r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{{Name: "a", URL: up.URL, Weight: 100}}}, DefaultOptions())
	for i := range 20 {
		if code, body := do(t, r, "mls", "/", "x", nil); code != http.StatusOK || body != "ok" {
			t.Fatalf("request %d: %d %q", i, code, body)
		}
	}
	if n := conns.opened.Load(); n != 1 {
		t.Errorf("20 requests in turn took %d connections, want 1", n)
	}
	for deadline := time.Now().Add(10 * time.Second); conns.closed.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // until the release closes it
	}
	if code, _ := do(t, r, "mls", "/", "x", nil); code != http.StatusOK {
		t.Errorf("after the release closed the idle connection: %d, want 200", code)
	}
	if n := conns.opened.Load(); n != 2 {
		t.Errorf("%d connections after the idle one was closed, want 2", n)
	}
	if n := len(got()); n != 21 {
		t.Errorf("the release got %d requests, want 21", n)
	}
}

// TestConnectionClose: a release answering Connection: close gets the
// next request on a new connection.
func TestConnectionClose(t *testing.T) {
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		_, _ = io.WriteString(w, "bye")
	}))
	conns := startCounting(t, up)
	r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{{Name: "a", URL: up.URL, Weight: 100}}}, DefaultOptions())
	for i := range 3 {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "http://mls/", strings.NewReader("x")))
		if w.Code != http.StatusOK || w.Body.String() != "bye" || w.Header().Get("Connection") != "" {
			t.Fatalf("request %d: %d %q, Connection %q", i, w.Code, w.Body, w.Header().Get("Connection"))
		}
	}
	if n := conns.opened.Load(); n != 3 {
		t.Errorf("3 answers with Connection: close took %d connections, want 3", n)
	}
}

// TestClientGoesAway: a client that goes away while the release thinks
// ends its request in the router, which does not wait for the answer.
func TestClientGoesAway(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	t.Cleanup(func() { close(release); up.Close() })
	r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{{Name: "a", URL: up.URL, Weight: 100}}}, DefaultOptions())
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://mls/", strings.NewReader("x"))
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.ServeHTTP(w, req)
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the router still waits for the release after its client went away")
	}
	if w.Code != http.StatusBadGateway {
		t.Errorf("code %d, want 502", w.Code)
	}
}

// TestReleaseUnreachable: a release that refuses connections is a 502.
func TestReleaseUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{{Name: "a", URL: "http://" + addr, Weight: 100}}}, DefaultOptions())
	if code, _ := do(t, r, "mls", "/", "x", nil); code != http.StatusBadGateway {
		t.Errorf("code %d, want 502", code)
	}
}

// TestAnswersCutShort: an answer the release cuts short reaches the client
// as a broken answer, never as a whole one; informational answers before
// the final one are passed over.
func TestAnswersCutShort(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hints" {
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			_, _ = io.WriteString(w, "whole")
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "the first half")
		w.(http.Flusher).Flush()
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close()
		}
	}))
	t.Cleanup(up.Close)
	r := newRouter(t, &routerconfig.Config{Name: "mls", Releases: []routerconfig.Target{{Name: "a", URL: up.URL, Weight: 100}}}, DefaultOptions())
	front := httptest.NewServer(r)
	t.Cleanup(front.Close)
	resp, err := http.Post(front.URL+"/cut", "text/plain", strings.NewReader("x"))
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Error("an answer cut short reached the client whole")
	}
	resp, err = http.Post(front.URL+"/hints", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || string(b) != "whole" {
		t.Errorf("after early hints: %d %q %v, want 200 whole", resp.StatusCode, b, err)
	}
}

// TestTakes: only declared, small, plain exchanges with an http:// URL go
// out on the pool.
func TestTakes(t *testing.T) {
	plain, _ := url.Parse("http://model")
	tls, _ := url.Parse("https://model")
	post := func(n int64, header ...string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, "http://mls/", strings.NewReader(strings.Repeat("x", max(int(n), 0))))
		req.ContentLength = n
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		return req
	}
	for _, tc := range []struct {
		name   string
		target *url.URL
		req    *http.Request
		want   bool
	}{
		{"small", plain, post(100), true},
		{"no body", plain, post(0), true},
		{"at the bound", plain, post(maxBufferedBody), true},
		{"over the bound", plain, post(maxBufferedBody + 1), false},
		{"unknown size", plain, post(-1), false},
		{"https", tls, post(100), false},
		{"upgrade", plain, post(0, "Connection", "Upgrade", "Upgrade", "websocket"), false},
		{"100-continue", plain, post(100, "Expect", "100-continue"), false},
	} {
		if got := (&connPool{target: tc.target}).takes(tc.req); got != tc.want {
			t.Errorf("%s: takes %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestIdleTimeout: a connection idle longer than the pool's idle timeout
// is closed rather than used, so that new pods of a release get
// connections (TestConnectionsKept has one used within it kept).
func TestIdleTimeout(t *testing.T) {
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	conns := startCounting(t, up)
	target, _ := url.Parse(up.URL)
	d := &net.Dialer{}
	pool := &connPool{target: target, dial: d.DialContext, idleTimeout: 100 * time.Millisecond}
	send := func() {
		w := httptest.NewRecorder()
		if err := pool.serve(w, httptest.NewRequest(http.MethodPost, "http://mls/", strings.NewReader("x"))); err != nil || w.Body.String() != "ok" {
			t.Fatalf("%v, body %q", err, w.Body)
		}
	}
	send()
	time.Sleep(150 * time.Millisecond) // past the idle timeout, whatever the load
	send()
	if n := conns.opened.Load(); n != 2 {
		t.Errorf("a request after the idle timeout took %d connections in all, want 2", n)
	}
	for deadline := time.Now().Add(10 * time.Second); conns.closed.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := conns.closed.Load(); n != 1 {
		t.Errorf("%d connections closed, want the idle one", n)
	}
}
