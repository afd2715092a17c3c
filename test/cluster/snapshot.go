package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/accelstack/accelstack/test/harness"
)

// clusterCommands are the programs a cluster runs, on the host or in pods.
var clusterCommands = map[string]bool{
	"etcd": true, "kube-apiserver": true, "kube-controller-manager": true, "kube-scheduler": true,
	"kubelet": true, "containerd": true, "containerd-shim-runc-v2": true, "pause": true,
	"device-plugin": true, "node-agent": true, "csi-s3": true, "controllers": true, "scheduler": true,
	"datacube-executor": true, "workflow-events": true, "workflow-tools": true, "activity-proxy": true, "serving-router": true, "gateway": true, "console": true, "versitygw": true, "csi-provisioner": true, "rclone": true, "s3fs": true, enforcer: true,
}

// Snapshot is the host state that a cluster changes while it runs: Diff of
// a snapshot before Up and one after Down must be empty.
type Snapshot struct {
	Sysctls   map[string]string
	Paths     []string
	Mounts    []string
	Links     []string
	Cgroups   []string
	Chains    []string
	IPSets    []string
	Processes []string
	Listeners []string
}

// TakeSnapshot reads the host's state.
func TakeSnapshot() (Snapshot, error) {
	s := Snapshot{Sysctls: map[string]string{}, Paths: hostTree()}
	for _, k := range kernelTunables {
		if v, err := readSysctl(k); err == nil {
			s.Sysctls[k] = v
		}
	}
	mounts, err := harness.Mounts("/")
	if err != nil {
		return s, err
	}
	s.Mounts = sorted(slices.DeleteFunc(mounts, isTestTempMount))
	links, _ := os.ReadDir("/sys/class/net")
	for _, e := range links {
		s.Links = append(s.Links, e.Name())
	}
	s.Cgroups = topCgroups()
	s.Chains = iptablesChains()
	s.IPSets = ipsets()
	// Another package's tests running beside the cluster (an envtest
	// control plane) are no part of it.
	foreign := foreignTests()
	for pid, args := range processes(func(args []string) bool { return clusterCommands[filepath.Base(args[0])] }) {
		if !foreign[pid] {
			s.Processes = append(s.Processes, strings.Join(args, " "))
		}
	}
	sort.Strings(s.Processes)
	s.Listeners, err = tcpListeners(socketInodes(foreign))
	return s, err
}

// isTestTempMount says whether a mount point is in a Go test's temporary
// directory (t.TempDir: $TMPDIR/Test<name><n>/...): another package's tests
// running beside the cluster (csi-s3's FUSE mounts) mount there, the
// cluster never does.
func isTestTempMount(mountPoint string) bool {
	rel, err := filepath.Rel(os.TempDir(), mountPoint)
	return err == nil && strings.HasPrefix(rel, "Test") && !strings.HasPrefix(rel, "..")
}

// Diff lists what differs between two snapshots, one line each.
func Diff(before, after Snapshot) []string {
	var out []string
	for k, v := range before.Sysctls {
		if after.Sysctls[k] != v {
			out = append(out, fmt.Sprintf("sysctl %s: %s before, %s after", k, v, after.Sysctls[k]))
		}
	}
	out = append(out, diffSets("host path", before.Paths, after.Paths)...)
	out = append(out, diffSets("mount", before.Mounts, after.Mounts)...)
	out = append(out, diffSets("network link", before.Links, after.Links)...)
	out = append(out, diffSets("cgroup", before.Cgroups, after.Cgroups)...)
	out = append(out, diffSets("iptables chain", before.Chains, after.Chains)...)
	out = append(out, diffSets("ipset", before.IPSets, after.IPSets)...)
	out = append(out, diffSets("process", before.Processes, after.Processes)...)
	out = append(out, diffSets("TCP listener", before.Listeners, after.Listeners)...)
	sort.Strings(out)
	return out
}

// diffSets reports elements added or removed, counting duplicates (a
// mount point can be mounted twice).
func diffSets(what string, before, after []string) []string {
	count := map[string]int{}
	for _, v := range before {
		count[v]--
	}
	for _, v := range after {
		count[v]++
	}
	var out []string
	for v, n := range count {
		switch {
		case n > 0:
			out = append(out, fmt.Sprintf("%s %s: left behind (%d)", what, v, n))
		case n < 0:
			out = append(out, fmt.Sprintf("%s %s: gone (%d)", what, v, -n))
		}
	}
	return out
}

// tcpListeners lists the local addresses of listening TCP sockets, as the
// hex address:port of /proc/net/tcp and tcp6, but for the sockets whose
// inodes are in skip.
func tcpListeners(skip map[string]bool) ([]string, error) {
	var out []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) > 9 && fields[3] == "0A" && !skip[fields[9]] { // TCP_LISTEN, not a skipped socket's inode
				out = append(out, filepath.Base(f)+" "+fields[1])
			}
		}
	}
	return sorted(out), nil
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
