package router

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/accelstack/accelstack/pkg/netlimit"
	"github.com/accelstack/accelstack/pkg/serving/routerconfig"
)

// waitFor polls cond until it holds, failing t after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after a minute", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSlowBodies: 500 clients of a logged release each declare a body of
// 4 MiB, send 10 bytes of it and hold their connections. The router's
// heap grows by under 64 MiB (sizing the bodies' buffers by their
// Content-Length it grew by 2 GiB), and a normal request is answered
// meanwhile.
func TestSlowBodies(t *testing.T) {
	const clients, heapLimit = 500, 64 << 20
	a, s := upstream(t, "a"), newSink(t, nil)
	opts := DefaultOptions()
	opts.ReadTimeout = time.Hour // the clients are held for the whole test
	r := newRouter(t, &routerconfig.Config{Name: "mls", Namespace: "ns", Releases: []routerconfig.Target{
		{Name: "a", Host: "mls-predict-a", URL: a.URL, Weight: 100, Logger: &routerconfig.Logger{URLs: []string{s.srv.URL}}},
	}}, opts)
	var entered atomic.Int32
	srv := newServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		entered.Add(1)
		r.ServeHTTP(w, req)
	}), opts)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(netlimit.Limit(l, opts.MaxConns)) }()
	t.Cleanup(func() { _ = srv.Close() })

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	head := "POST /v1/models/m:predict HTTP/1.1\r\nHost: mls-predict-a.ns\r\nContent-Type: application/json\r\nContent-Length: 4194304\r\n\r\n[[0.1234,"
	for range clients {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, fmt.Sprintf("%d slow requests in the router", clients), func() bool { return entered.Load() >= clients })

	// A normal request, while the slow ones hold their connections.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+l.Addr().String()+"/v1/models/m:predict", strings.NewReader(`{"instances":[1]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "mls-predict-a.ns"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("a normal request among the slow ones: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != `a:{"instances":[1]}` {
		t.Errorf("a normal request among the slow ones: %d %q", resp.StatusCode, body)
	}

	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("%d slow requests: heap in use grew by %d KiB", clients, growth>>10)
	if growth > heapLimit {
		t.Errorf("%d slow requests grew the heap in use by %d MiB, want under %d MiB", clients, growth>>20, heapLimit>>20)
	}
	if n := entered.Load(); n != clients+1 {
		t.Errorf("%d requests entered the router, want %d", n, clients+1)
	}
}

// TestServerTimeouts checks that the server takes its timeouts from the
// options.
func TestServerTimeouts(t *testing.T) {
	opts := DefaultOptions()
	srv := newServer(http.NotFoundHandler(), opts)
	if srv.ReadTimeout != DefaultReadTimeout || srv.IdleTimeout != DefaultIdleTimeout || srv.ReadHeaderTimeout != opts.ReadHeaderTimeout || srv.ReadTimeout <= 0 {
		t.Errorf("read %v, idle %v, read header %v", srv.ReadTimeout, srv.IdleTimeout, srv.ReadHeaderTimeout)
	}
}
