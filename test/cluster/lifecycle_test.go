//go:build e2e

package cluster

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLifecycle brings a cluster up twice (the second a no-op), crashes
// it, checks that Up cleans up and starts again, then that Down leaves
// the host as the first Up found it. Run by make test-e2e (root).
func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Running(ctx) {
		t.Fatal("a local cluster is already running: make cluster-down first")
	}
	if err := c.Down(ctx); err != nil {
		t.Fatalf("cleaning up an earlier cluster: %v", err)
	}
	before, err := TakeSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Down(ctx); err != nil {
			t.Errorf("down: %v", err)
		}
		after, err := TakeSnapshot()
		if err != nil {
			t.Fatal(err)
		}
		if diff := Diff(before, after); len(diff) > 0 {
			t.Errorf("the host is not as the cluster found it:\n  %s", strings.Join(diff, "\n  "))
		}
	})

	start := time.Now()
	if err := c.Up(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("up: %s", time.Since(start).Round(100*time.Millisecond))
	first := recordedPIDs(t, c)

	if err := c.Up(ctx); err != nil {
		t.Fatalf("second up: %v", err)
	}
	if again := recordedPIDs(t, c); !equalPIDs(first, again) {
		t.Fatalf("a second up on a running cluster restarted processes: %v, then %v", first, again)
	}

	// A crash: every cluster process dies at once, leaving mounts, the
	// bridge, cgroups and records behind.
	for _, pid := range first {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	waitDead(t, first)
	if c.Running(ctx) {
		t.Fatal("Running after every process was killed")
	}
	start = time.Now()
	if err := c.Up(ctx); err != nil {
		t.Fatalf("up after a crash: %v", err)
	}
	t.Logf("up after a crash (cleanup included): %s", time.Since(start).Round(100*time.Millisecond))
	if !c.Running(ctx) {
		t.Fatal("not running after up")
	}
	for name, pid := range recordedPIDs(t, c) {
		if pid == first[name] {
			t.Errorf("%s kept pid %d across the crash", name, pid)
		}
	}
	// The cluster runs pods after the crash.
	if _, err := c.Kubectl(ctx, "run", "after-crash", "--image="+BusyboxImage, "--image-pull-policy=Never",
		"--restart=Never", "--command", "--", "true"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Kubectl(ctx, "wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/after-crash", "--timeout=120s"); err != nil {
		t.Fatal(err)
	}
}

func recordedPIDs(t *testing.T, c *Cluster) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, name := range components {
		d, err := loadDaemon(c.l, name)
		if err != nil || d == nil {
			t.Fatalf("no record of %s: %v", name, err)
		}
		out[name] = d.PID
	}
	return out
}

func equalPIDs(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func waitDead(t *testing.T, pids map[string]int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil {
			if state, _, err := procState(pid); err != nil || state == "Z" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pid %d survived SIGKILL", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
