package cluster

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// foreignTests returns the processes that belong to another package's test
// run on the same host: every Go test binary (`*.test`) other than this
// process, and its descendants, such as the etcd and kube-apiserver of an
// envtest control plane. Their processes and sockets are no cluster's, so a
// host snapshot leaves them out.
func foreignTests() map[int]bool {
	parent := map[int]int{}
	testBinary := map[int]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentPID(pid); ok {
			parent[pid] = ppid
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && len(b) > 0 {
			argv0, _, _ := strings.Cut(string(b), "\x00")
			testBinary[pid] = strings.HasSuffix(filepath.Base(argv0), ".test")
		}
	}
	self := os.Getpid()
	return foreignOf(parent, testBinary, self)
}

// foreignOf returns the pids that are, or descend from, a test binary other
// than self, given each process's parent.
func foreignOf(parent map[int]int, testBinary map[int]bool, self int) map[int]bool {
	out := map[int]bool{}
	for pid := range parent {
		for p, hops := pid, 0; p > 1 && hops < 64; p, hops = parent[p], hops+1 {
			if p == self {
				break
			}
			if testBinary[p] {
				out[pid] = true
				break
			}
		}
	}
	return out
}

// parentPID reads a process's parent from /proc/<pid>/stat, whose second
// field (the command) may hold spaces and parentheses.
func parentPID(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// socketInodes returns the inodes of the sockets that pids hold open.
func socketInodes(pids map[int]bool) map[string]bool {
	out := map[string]bool{}
	for pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") {
				out[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
			}
		}
	}
	return out
}
