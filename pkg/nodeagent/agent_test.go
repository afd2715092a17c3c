package nodeagent

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/simcontrol"
)

func TestServe(t *testing.T) {
	a, err := New(context.Background(), Config{Sources: []Source{}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, l) }()

	base := "http://" + l.Addr().String()
	testCases := []struct {
		path string
		want string
	}{
		{path: "/healthz", want: "ok"},
		{path: "/metrics", want: `accelstack_build_info{component="node-agent"`},
		{path: "/metrics", want: "go_goroutines"},
	}
	for _, tc := range testCases {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := http.Get(base + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), tc.want) {
				t.Errorf("GET %s = %s, body without %q:\n%.500s", tc.path, resp.Status, tc.want, body)
			}
		})
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve returned %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
}

// TestControlSocket: a simulated agent's control socket changes the
// machine it reads, so its next collection serves the GPU utilization set
// there; without the simulated backend the socket is refused.
func TestControlSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "sim.sock")
	a, err := New(context.Background(), Config{Backend: accelerator.BackendSimulated, Simulate: "dgxa100",
		ControlSocket: sock, CollectInterval: 50 * time.Millisecond, Address: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})

	series := regexp.MustCompile(`(?m)^DCGM_FI_DEV_GPU_UTIL\{[^}]*gpu="3"[^}]*\} (\d+)$`)
	utilization := func() string {
		resp, err := http.Get("http://" + l.Addr().String() + "/metrics")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if m := series.FindSubmatch(body); m != nil {
			return string(m[1])
		}
		return "(no series)"
	}
	waitFor := func(want string) {
		t.Helper()
		got := ""
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if got = utilization(); got == want {
				return
			}
		}
		t.Fatalf("GPU 3 utilization %s, want %s", got, want)
	}
	waitFor("30") // the simulator's default: 10% × index
	var err2 error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err2 = simcontrol.Send(sock, "util 3 87"); err2 == nil {
			break
		}
	}
	if err2 != nil {
		t.Fatal(err2)
	}
	waitFor("87")
	if err := simcontrol.Send(sock, "util 3 nope"); err == nil {
		t.Error("a bad command: no error")
	}

	if _, err := New(context.Background(), Config{Sources: []Source{}, ControlSocket: sock}); err == nil {
		t.Error("a control socket without a simulated machine: no error")
	}
}
