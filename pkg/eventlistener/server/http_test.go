package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

func readyTrue() *atomic.Bool {
	var b atomic.Bool
	b.Store(true)
	return &b
}

func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- ServeListener(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "app") }))
	}()
	base := "http://" + ln.Addr().String()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for path, want := range map[string]string{serverconfig.HealthzPath: "ok", serverconfig.ReadyzPath: "ok", "/t9k/workflow/triggers/a/b": "app"} {
		if code, body := get(path); code != http.StatusOK || body != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, code, body, want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v after the context ended", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return after the context ended")
	}
}

func TestMuxNotReady(t *testing.T) {
	var ready atomic.Bool
	h := Mux(http.NotFoundHandler(), &ready)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	resp, err := http.Get("http://" + ln.Addr().String() + serverconfig.ReadyzPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("readyz while not ready: %d, want 503", resp.StatusCode)
	}
}
