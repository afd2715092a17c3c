package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/accelstack/accelstack/test/cluster/modelserver"
)

func TestTargets(t *testing.T) {
	for _, tc := range []struct {
		added time.Duration
		ratio float64
		want  string
	}{
		{999 * time.Microsecond, 0.8, "met"},
		{-time.Millisecond, 1.2, "met"},
		{time.Millisecond, 0.9, "added p99 >= 1 ms"},
		{0, 0.79, "ratio < 0.80"},
		{3 * time.Millisecond, 0.3, "added p99 >= 1 ms, ratio < 0.80"},
	} {
		if got := targets(tc.added, tc.ratio); got != tc.want {
			t.Errorf("targets(%s, %.2f) = %q, want %q", tc.added, tc.ratio, got, tc.want)
		}
	}
}

func TestPct(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if got := pct(d, 50); got != 50*time.Millisecond {
		t.Errorf("p50 %s", got)
	}
	if got := pct(d, 99); got != 99*time.Millisecond {
		t.Errorf("p99 %s", got)
	}
	if d[0] != 100*time.Millisecond {
		t.Error("pct sorted its argument")
	}
}

// TestProcessCPU: the CPU time read from /proc grows with the CPU a
// process burns; no process has none.
func TestProcessCPU(t *testing.T) {
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: &exec.Cmd{Process: self}}
	before := p.cpu()
	// Bounded by the wall clock too, so that a reading stuck at zero fails
	// the check below rather than spinning until the test's timeout.
	for start, deadline := p.cpu(), time.Now().Add(30*time.Second); p.cpu()-start < 200*time.Millisecond && time.Now().Before(deadline); {
		for i := range 1 << 20 {
			_ = strings.Repeat("x", i%7)
		}
	}
	if got := p.cpu() - before; got < 200*time.Millisecond || got > 10*time.Second {
		t.Errorf("burning 200 ms of CPU read as %s", got)
	}
	if got := (*process)(nil).cpu(); got != 0 {
		t.Errorf("no process: %s", got)
	}
}

// TestSink: the sink counts the CloudEvents it receives, not other
// requests, and tells the count.
func TestSink(t *testing.T) {
	h, err := handler("sink")
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	defer s.Close()
	for _, id := range []string{"1", "", "2"} {
		req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader("{}"))
		if id != "" {
			req.Header.Set("Ce-Id", id)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("status %s", resp.Status)
		}
	}
	if n, err := drained(context.Background(), s.URL); err != nil || n != 2 {
		t.Errorf("count %d, %v; want 2", n, err)
	}
	if _, err := handler("other"); err == nil {
		t.Error("an unknown role was served")
	}
}

// TestNoop: the no-op server answers what the Python model server does.
func TestNoop(t *testing.T) {
	h, err := handler("noop")
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	defer s.Close()
	if err := predict(context.Background(), http.DefaultClient, s.URL); err != nil {
		t.Error(err)
	}
}

// TestPythonModelServer: the model server of the serving tests, run as
// the bench runs it, answers the request with responseBody,
// the bytes the no-op server answers.
func TestPythonModelServer(t *testing.T) {
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skipf("no %s", python)
	}
	dir := t.TempDir()
	script := dir + "/model-server"
	if err := os.WriteFile(script, []byte(modelserver.Script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/model.json", []byte(modelJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(addr)
	p, err := startProcess(dir, "model-server", nil, python, script, "--port", port, "--model-dir", dir, "--name", "m")
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	ctx := context.Background()
	if err := waitReady(ctx, "http://"+addr+"/v1/models/m"); err != nil {
		t.Fatal(err)
	}
	if err := predict(ctx, http.DefaultClient, "http://"+addr); err != nil {
		t.Error(err)
	}
}
