package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/accelstack/accelstack/test/harness"
)

// MemorySampler samples the resident memory of the whole cluster: its own
// processes (control plane, containerd, kubelet, shims), every process of
// its pods, and the FUSE daemons csi-s3 keeps outside them.
type MemorySampler struct {
	mu     sync.Mutex
	peak   uint64
	cancel context.CancelFunc
	done   chan struct{}
}

// SampleMemory starts sampling every interval until Stop.
func SampleMemory(interval time.Duration) *MemorySampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &MemorySampler{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if total := RSS(); total > 0 {
				s.mu.Lock()
				s.peak = max(s.peak, total)
				s.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the peak in bytes.
func (s *MemorySampler) Stop() uint64 {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// RSS sums the resident memory, in bytes, of the cluster's
// processes now.
func RSS() uint64 {
	var total uint64
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		if !clusterProcess(dir) {
			continue
		}
		if m, err := harness.ProcessMemory(pid); err == nil {
			total += m.RSS
		}
	}
	return total
}

// clusterProcess tells whether the process at /proc/PID belongs to the
// cluster: a cluster program, or anything in a pod's or csi-s3's cgroup.
func clusterProcess(dir string) bool {
	if b, err := os.ReadFile(filepath.Join(dir, "cgroup")); err == nil {
		s := string(b)
		for _, name := range ownCgroups {
			if strings.Contains(s, ":/"+name) {
				return true
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil || len(b) == 0 {
		return false
	}
	argv0, _, _ := strings.Cut(string(b), "\x00")
	return clusterCommands[filepath.Base(argv0)]
}
