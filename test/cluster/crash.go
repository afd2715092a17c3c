package cluster

import (
	"context"
	"fmt"
	"maps"
	"syscall"
	"time"
)

// UpThroughCrash brings the cluster up the hard way: up, a second up that
// must leave every process as it was, then a crash (every cluster process
// killed at once, leaving mounts, the bridge, cgroups and records behind)
// and an up that must clean up after it and start every process again.
// The end-to-end run starts from it, so its tests run on a cluster that
// recovered from a crash. It returns how long the first up and the up
// after the crash took.
func (c *Cluster) UpThroughCrash(ctx context.Context) (first, afterCrash time.Duration, err error) {
	start := time.Now()
	if err := c.Up(ctx); err != nil {
		return 0, 0, err
	}
	first = time.Since(start)
	before, err := c.pids()
	if err != nil {
		return first, 0, err
	}
	if err := c.Up(ctx); err != nil {
		return first, 0, fmt.Errorf("second up: %w", err)
	}
	again, err := c.pids()
	if err != nil {
		return first, 0, err
	}
	if !maps.Equal(before, again) {
		return first, 0, fmt.Errorf("a second up on a running cluster restarted processes: %v, then %v", before, again)
	}

	for _, pid := range before {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if err := waitDead(before, 10*time.Second); err != nil {
		return first, 0, err
	}
	if c.Running(ctx) {
		return first, 0, fmt.Errorf("running after every process was killed")
	}
	start = time.Now()
	if err := c.Up(ctx); err != nil {
		return first, 0, fmt.Errorf("up after a crash: %w", err)
	}
	afterCrash = time.Since(start)
	if !c.Running(ctx) {
		return first, afterCrash, fmt.Errorf("not running after the up that followed a crash")
	}
	now, err := c.pids()
	if err != nil {
		return first, afterCrash, err
	}
	for name, pid := range now {
		if pid == before[name] {
			return first, afterCrash, fmt.Errorf("%s kept pid %d across the crash", name, pid)
		}
	}
	return first, afterCrash, nil
}

// pids returns the recorded process ID of every cluster component.
func (c *Cluster) pids() (map[string]int, error) {
	out := map[string]int{}
	for _, name := range components {
		d, err := loadDaemon(c.l, name)
		if err != nil {
			return nil, fmt.Errorf("reading the record of %s: %w", name, err)
		}
		if d == nil {
			return nil, fmt.Errorf("no record of %s", name)
		}
		out[name] = d.PID
	}
	return out, nil
}

// waitDead waits until every process is gone or a zombie.
func waitDead(pids map[string]int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for name, pid := range pids {
		for syscall.Kill(pid, 0) == nil {
			if state, _, err := procState(pid); err != nil || state == "Z" {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s (pid %d) survived SIGKILL for %s", name, pid, timeout)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}
