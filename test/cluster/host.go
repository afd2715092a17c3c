package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/accelstack/accelstack/test/harness"
)

// hostRecord is what Up found on the host before changing it, kept in the
// state dir so that Down (even after a crash) can put it back.
type hostRecord struct {
	// Sysctls holds the kernel tunables' values before the kubelet ran.
	Sysctls map[string]string `json:"sysctls"`
	// Paths lists what existed before Up under the host paths the kubelet
	// and containerd use (hostTree).
	Paths map[string]bool `json:"paths"`
	// Cgroups lists top-level cgroups (hierarchy/name) that existed before.
	Cgroups map[string]bool `json:"cgroups"`
	// Chains lists iptables chains (table/chain) that existed before.
	Chains map[string]bool `json:"chains"`
	// IPSets lists the KUBE-* ipsets that existed before.
	IPSets map[string]bool `json:"ipsets"`
}

// recordHost reads the host's state before Up changes it.
func recordHost() hostRecord {
	r := hostRecord{Sysctls: map[string]string{}, Paths: map[string]bool{}, Cgroups: map[string]bool{}, Chains: map[string]bool{}, IPSets: map[string]bool{}}
	for _, k := range kernelTunables {
		if v, err := readSysctl(k); err == nil {
			r.Sysctls[k] = v
		}
	}
	for _, p := range hostTree() {
		r.Paths[p] = true
	}
	for _, cg := range topCgroups() {
		r.Cgroups[cg] = true
	}
	for _, c := range iptablesChains() {
		r.Chains[c] = true
	}
	for _, s := range ipsets() {
		r.IPSets[s] = true
	}
	return r
}

func saveHostRecord(l layout, r hostRecord) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(l.hostRecord(), b, 0o600)
}

func loadHostRecord(l layout) (*hostRecord, error) {
	var r hostRecord
	if found, err := readJSON(l.hostRecord(), &r); !found || err != nil {
		return nil, err
	}
	return &r, nil
}

// readJSON decodes the file at path into v; a missing file is not found
// and no error.
func readJSON(path string, v any) (found bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	return true, nil
}

func sysctlPath(key string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
}

func readSysctl(key string) (string, error) {
	b, err := os.ReadFile(sysctlPath(key))
	return strings.TrimSpace(string(b)), err
}

func writeSysctl(key, value string) error {
	return os.WriteFile(sysctlPath(key), []byte(value+"\n"), 0o644)
}

// createBridge creates the cluster bridge with the gateway and API server
// addresses before anything binds them. An existing bridge is reused.
func createBridge() error {
	if _, err := os.Stat("/sys/class/net/" + Bridge); err != nil {
		if err := run("ip", "link", "add", Bridge, "type", "bridge"); err != nil {
			return err
		}
	}
	for _, cidr := range []string{GatewayIP + "/24", APIServerIP + "/32"} {
		out, err := exec.Command("ip", "-o", "addr", "show", "dev", Bridge).Output()
		if err != nil {
			return fmt.Errorf("ip addr show %s: %w", Bridge, err)
		}
		if !strings.Contains(string(out), " "+cidr+" ") {
			if err := run("ip", "addr", "add", cidr, "dev", Bridge); err != nil {
				return err
			}
		}
	}
	return run("ip", "link", "set", Bridge, "up")
}

// deleteBridge deletes the cluster's bridge and the pods' veths still on it.
func deleteBridge() error {
	if _, err := os.Stat("/sys/class/net/" + Bridge); err != nil {
		return nil //nolint:nilerr // no bridge, nothing to delete
	}
	// The pods' host-side veths still on the bridge go first: a pod whose
	// CNI teardown never ran (its processes killed with containerd) would
	// otherwise keep its veth pair after the bridge is gone, for as long as
	// the kernel keeps its network namespace.
	ports, _ := os.ReadDir("/sys/class/net/" + Bridge + "/brif")
	var errs []error
	for _, p := range ports {
		if err := run("ip", "link", "del", p.Name()); err != nil {
			if _, serr := os.Stat("/sys/class/net/" + p.Name()); serr == nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(append(errs, run("ip", "link", "del", Bridge))...)
}

// unmountUnder unmounts every mount at or below the roots, deepest first;
// a busy mount is detached.
func unmountUnder(roots ...string) error {
	var errs []error
	for pass := 0; pass < 5; pass++ {
		var todo []string
		for _, r := range roots {
			mounts, err := harness.Mounts(r)
			if err != nil {
				return err
			}
			todo = append(todo, mounts...)
		}
		if len(todo) == 0 {
			return nil
		}
		sort.Sort(sort.Reverse(sort.StringSlice(todo)))
		errs = errs[:0]
		for _, m := range todo {
			if err := syscall.Unmount(m, 0); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
					errs = append(errs, fmt.Errorf("unmounting %s: %w", m, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// cgroupHierarchies returns the cgroup hierarchy roots: each v1 controller
// mount under /sys/fs/cgroup (links such as cpu -> cpu,cpuacct skipped),
// or /sys/fs/cgroup itself on a unified (v2) host.
func cgroupHierarchies() []string {
	const root = "/sys/fs/cgroup"
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		return []string{root}
	}
	entries, _ := os.ReadDir(root)
	var out []string
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 || !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err == nil {
			out = append(out, dir)
		}
	}
	return out
}

// topCgroups lists hierarchy/name for each top-level cgroup.
func topCgroups() []string {
	var out []string
	for _, h := range cgroupHierarchies() {
		entries, _ := os.ReadDir(h)
		for _, e := range entries {
			if e.IsDir() {
				out = append(out, filepath.Join(h, e.Name()))
			}
		}
	}
	sort.Strings(out)
	return out
}

// removeCgroup kills every process left in the cgroup tree at dir, then
// removes the tree, deepest first.
func removeCgroup(dir string) error {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for _, d := range dirs {
		b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	var errs []error
	for _, d := range dirs {
		var err error
		for try := 0; try < 50; try++ {
			if err = syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
				err = nil
				break
			}
			if !errors.Is(err, syscall.EBUSY) {
				break
			}
			sleepBriefly()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// iptablesChains lists table/chain for the KUBE-* chains of iptables and
// ip6tables; none when the commands are missing.
func iptablesChains() []string {
	var out []string
	for _, cmd := range []string{"iptables", "ip6tables"} {
		if _, err := exec.LookPath(cmd); err != nil {
			continue
		}
		for _, table := range []string{"filter", "nat", "mangle"} {
			b, err := exec.Command(cmd, "-t", table, "-S").Output()
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[0] == "-N" && strings.HasPrefix(f[1], "KUBE-") {
					out = append(out, cmd+"/"+table+"/"+f[1])
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// removeChains removes the KUBE-* chains that did not exist before Up
// (existed): first the rules of the other chains that jump to them, then
// their rules, then the chains, so that chains jumping to one another (the
// pod firewall's) go in any order.
func removeChains(existed map[string]bool) error {
	byTable := map[string][]string{} // "cmd/table" -> chains
	for _, id := range iptablesChains() {
		if existed[id] {
			continue
		}
		parts := strings.SplitN(id, "/", 3)
		if len(parts) != 3 {
			return fmt.Errorf("bad chain id %q", id)
		}
		key := parts[0] + "/" + parts[1]
		byTable[key] = append(byTable[key], parts[2])
	}
	var errs []error
	for key, chains := range byTable {
		cmd, table, _ := strings.Cut(key, "/")
		gone := map[string]bool{}
		for _, chain := range chains {
			gone[chain] = true
		}
		b, err := exec.Command(cmd, "-t", table, "-S").Output()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s -t %s -S: %w", cmd, table, err))
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := splitRule(line)
			if len(f) > 3 && f[0] == "-A" && !gone[f[1]] && gone[ruleTarget(f)] {
				f[0] = "-D"
				if err := run(cmd, append([]string{"-t", table}, f...)...); err != nil {
					errs = append(errs, err)
				}
			}
		}
		for _, chain := range chains {
			if err := run(cmd, "-t", table, "-F", chain); err != nil {
				errs = append(errs, err)
			}
		}
		for _, chain := range chains {
			if err := run(cmd, "-t", table, "-X", chain); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// ruleTarget returns the chain a rule of iptables -S jumps or goes to.
func ruleTarget(fields []string) string {
	for i := 0; i+1 < len(fields); i++ {
		if fields[i] == "-j" || fields[i] == "-g" {
			return fields[i+1]
		}
	}
	return ""
}

// splitRule splits a line of iptables -S into its arguments: a double
// quoted one (a comment with spaces) is one argument, without its quotes;
// a backslash keeps the character after it.
func splitRule(line string) []string {
	var out []string
	var cur strings.Builder
	inQuote, inArg := false, false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inArg = true
		case ch == '"':
			inQuote = !inQuote
			inArg = true
		case (ch == ' ' || ch == '\t') && !inQuote:
			if inArg {
				out = append(out, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(ch)
			inArg = true
		}
	}
	if inArg {
		out = append(out, cur.String())
	}
	return out
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// removeUnmounted removes the tree at path, but only if nothing is mounted
// in it: removing through a mount would delete what it holds (a FUSE
// mount of a bucket, say).
func removeUnmounted(path string) error {
	mounts, err := harness.Mounts(path)
	if err != nil {
		return err
	}
	if len(mounts) > 0 {
		return fmt.Errorf("not removing %s: %s is still mounted", path, mounts[0])
	}
	return os.RemoveAll(path)
}

// hostTreeDepth is how deep hostTree looks: deep enough for containerd's
// /run/containerd/runc/k8s.io/<container> and /run/netns/<pod netns>.
const hostTreeDepth = 3

// hostTree lists the host paths and what is below them, hostTreeDepth
// levels deep, without following links.
func hostTree() []string {
	var out []string
	for _, root := range hostPaths {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return nil //nolint:nilerr // a missing or vanished path is simply not listed
			}
			out = append(out, p)
			if d.IsDir() && p != root && strings.Count(strings.TrimPrefix(p, root), "/") >= hostTreeDepth {
				return filepath.SkipDir
			}
			return nil
		})
	}
	sort.Strings(out)
	return out
}

// removeNewPaths removes what is under the host paths now and was not
// before (existed), top down, never through a mount.
func removeNewPaths(existed map[string]bool) error {
	var errs []error
	for _, p := range hostTree() {
		if existed[p] {
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			continue // removed with a parent
		}
		if err := removeUnmounted(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
