package cluster

import (
	"context"
	"fmt"
	"maps"
	"syscall"
	"time"
)

// UpTwice brings the cluster up, then runs a second up, which must leave
// every process as it was. It returns how long the first up took.
func (c *Cluster) UpTwice(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	if err := c.Up(ctx); err != nil {
		return 0, err
	}
	first := time.Since(start)
	before, err := c.pids()
	if err != nil {
		return first, err
	}
	if err := c.Up(ctx); err != nil {
		return first, fmt.Errorf("second up: %w", err)
	}
	again, err := c.pids()
	if err != nil {
		return first, err
	}
	if !maps.Equal(before, again) {
		return first, fmt.Errorf("a second up on a running cluster restarted processes: %v, then %v", before, again)
	}
	return first, nil
}

// Crash kills every cluster process at once, as a power cut or the OOM
// killer would, leaving the pods' processes, mounts, the bridge, cgroups
// and the records behind, and checks that the cluster no longer counts as
// running. Down, which the next Up runs first, must clean up after it.
func (c *Cluster) Crash(ctx context.Context) error {
	pids, err := c.pids()
	if err != nil {
		return err
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if err := waitDead(pids, 10*time.Second); err != nil {
		return err
	}
	if c.Running(ctx) {
		return fmt.Errorf("running after every process was killed")
	}
	return nil
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
