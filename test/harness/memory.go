package harness

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Memory is the resident memory of a process, in bytes, from
// /proc/PID/status.
type Memory struct {
	// RSS is VmRSS, all resident pages.
	RSS uint64
	// Anon is RssAnon: the Go heap, stacks and runtime.
	Anon uint64
	// File is RssFile: mapped files, mostly the binary; kernels that map
	// page-cache large folios whole count most of its text and read-only
	// data here, touched or not.
	File uint64
	// Peak is VmHWM, the most RSS the process has had since it started.
	Peak uint64
}

// ProcessMemory reads the resident memory of process pid.
func ProcessMemory(pid int) (Memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		kb, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			m.RSS, found = kb<<10, true
		case "RssAnon:":
			m.Anon = kb << 10
		case "RssFile:":
			m.File = kb << 10
		case "VmHWM:":
			m.Peak = kb << 10
		}
	}
	if !found {
		return Memory{}, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	return m, nil
}

// String gives the resident memory with its split, e.g.
// "35.4 MiB (anonymous 13.0, file-mapped 22.5)".
func (m Memory) String() string {
	mib := func(b uint64) float64 { return float64(b) / (1 << 20) }
	return fmt.Sprintf("%.1f MiB (anonymous %.1f, file-mapped %.1f)", mib(m.RSS), mib(m.Anon), mib(m.File))
}
