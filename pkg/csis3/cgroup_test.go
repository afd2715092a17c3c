package csis3

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeTree creates files (path: content; a path ending in / is a
// directory, "->target" a symbolic link) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasSuffix(p, "/"):
			err = os.MkdirAll(full, 0o755)
		case strings.HasPrefix(content, "->"):
			err = os.Symlink(strings.TrimPrefix(content, "->"), full)
		default:
			err = os.WriteFile(full, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestCgroupHierarchies(t *testing.T) {
	testCases := []struct {
		name    string
		files   map[string]string
		want    []string
		wantErr bool
	}{
		{
			name: "v1 hybrid",
			files: map[string]string{
				"cpu,cpuacct/cgroup.procs": "", "cpu": "->cpu,cpuacct", "cpuacct": "->cpu,cpuacct",
				"memory/cgroup.procs": "", "systemd/cgroup.procs": "",
				"unified/cgroup.procs": "", "unified/cgroup.controllers": "",
				"not-a-cgroup/": "", "a-file": "",
			},
			want: []string{"cpu,cpuacct", "memory", "systemd", "unified"},
		},
		{
			name:  "v2 root",
			files: map[string]string{"cgroup.procs": "", "cgroup.controllers": "cpu memory", "kubepods/cgroup.procs": ""},
			want:  []string{"."},
		},
		{name: "no cgroup", files: map[string]string{"cpu/": ""}, wantErr: true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tc.files)
			got, err := cgroupHierarchies(root)
			if (err != nil) != tc.wantErr {
				t.Fatalf("cgroupHierarchies() error = %v, want error %v", err, tc.wantErr)
			}
			var rel []string
			for _, h := range got {
				r, _ := filepath.Rel(root, h)
				rel = append(rel, r)
			}
			if diff := cmp.Diff(tc.want, rel); diff != "" {
				t.Errorf("cgroupHierarchies() (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := cgroupHierarchies(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("cgroupHierarchies(missing dir) = nil error")
	}
}

// TestMoveToCgroupFakeTree moves on a fake tree where the "kernel" files
// of the target cgroups are written beforehand.
func TestMoveToCgroupFakeTree(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"cpuset/cgroup.procs": "", "cpuset/cpuset.cpus": "0-3\n", "cpuset/cpuset.mems": "0\n",
		"cpuset/daemons/cgroup.procs": "", "cpuset/daemons/cpuset.cpus": "\n", "cpuset/daemons/cpuset.mems": "",
		"pids/cgroup.procs": "", "pids/daemons/cgroup.procs": "",
		// memory/daemons is made by moveToCgroup and, unlike cgroupfs, a
		// tmpfs gives it no cgroup.procs: the move fails there.
		"memory/cgroup.procs": "",
	})
	moved, err := moveToCgroup(root, "daemons", 4242)
	if diff := cmp.Diff([]string{filepath.Join(root, "cpuset"), filepath.Join(root, "pids")}, moved); diff != "" {
		t.Errorf("moved (-want +got):\n%s", diff)
	}
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root, "memory")) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("moveToCgroup() error = %v, want the memory hierarchy's missing cgroup.procs", err)
	}
	for file, want := range map[string]string{
		"cpuset/daemons/cgroup.procs": "4242", "pids/daemons/cgroup.procs": "4242",
		"cpuset/daemons/cpuset.cpus": "0-3\n", "cpuset/daemons/cpuset.mems": "0\n",
	} {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", file, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "memory", "daemons")); err != nil {
		t.Errorf("memory/daemons not created: %v", err)
	}

	for _, name := range []string{"", ".", "..", "a/b"} {
		if _, err := moveToCgroup(root, name, 4242); err == nil {
			t.Errorf("moveToCgroup(name %q) = nil error", name)
		}
	}
}

// realCgroupRoot returns /sys/fs/cgroup's hierarchies. Without root or
// hierarchies it fails the test under CI (CI set), where these tests
// must run, and skips it elsewhere, saying why.
func realCgroupRoot(t *testing.T) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		requireInCI(t, "moving processes between cgroups needs root")
	}
	hs, err := cgroupHierarchies("/sys/fs/cgroup")
	if err != nil {
		requireInCI(t, fmt.Sprintf("no cgroup hierarchies under /sys/fs/cgroup: %v", err))
	}
	return hs
}

// requireInCI fails the test under CI and skips it elsewhere, with reason.
func requireInCI(t *testing.T, reason string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (required in CI)", reason)
	}
	t.Skipf("skipping: %s", reason)
}

// startSleep starts a sleep and kills and reaps it when the test ends,
// then removes the test cgroup name from every hierarchy, failed or not.
func startSleep(t *testing.T, hierarchies []string, name string, start func(Command) (int, func())) int {
	t.Helper()
	pid, wait := start(Command{Path: "sleep", Args: []string{"300"}})
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		wait()
		for _, h := range hierarchies {
			removeCgroup(t, filepath.Join(h, name))
		}
	})
	return pid
}

// removeCgroup removes an (empty) cgroup directory, retrying while the
// kernel still counts a just-reaped process in it.
func removeCgroup(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("removing test cgroup: %v", err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// assertInCgroup checks that pid is in cgroup name in each of hierarchies,
// by /proc/PID/cgroup and by the cgroups' cgroup.procs.
func assertInCgroup(t *testing.T, pid int, name string, hierarchies []string) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	in := 0
	for _, line := range lines {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && strings.HasSuffix(parts[2], "/"+name) {
			in++
		} else {
			t.Errorf("/proc/%d/cgroup line %q: not in cgroup %s", pid, line, name)
		}
	}
	if in != len(hierarchies) {
		t.Errorf("/proc/%d/cgroup lists %s in %d hierarchies, want %d:\n%s", pid, name, in, len(hierarchies), b)
	}
	for _, h := range hierarchies {
		procs, err := os.ReadFile(filepath.Join(h, name, "cgroup.procs"))
		if err != nil || !containsLine(string(procs), strconv.Itoa(pid)) {
			t.Errorf("%s/%s/cgroup.procs = %q, %v; want pid %d", h, name, procs, err, pid)
		}
	}
}

func containsLine(s, line string) bool {
	for _, l := range strings.Split(s, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// TestMoveToCgroupReal moves a real process on this machine's hierarchies
// (cgroup v1, v2 or hybrid) into a test cgroup.
func TestMoveToCgroupReal(t *testing.T) {
	hs := realCgroupRoot(t)
	name := fmt.Sprintf("%s-test-%d-%d", DaemonCgroupName, os.Getpid(), time.Now().UnixNano())
	pid := startSleep(t, hs, name, func(cmd Command) (int, func()) {
		c := exec.Command(cmd.Path, cmd.Args...)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		return c.Process.Pid, func() { _ = c.Wait() }
	})
	moved, err := moveToCgroup("/sys/fs/cgroup", name, pid)
	if err != nil {
		t.Fatalf("moveToCgroup() = %v (moved in %v)", err, moved)
	}
	if diff := cmp.Diff(hs, moved); diff != "" {
		t.Errorf("moved (-want +got):\n%s", diff)
	}
	assertInCgroup(t, pid, name, hs)

	// Moving again, into an existing cgroup, is fine.
	if _, err := moveToCgroup("/sys/fs/cgroup", name, pid); err != nil {
		t.Errorf("second moveToCgroup() = %v", err)
	}
}

// TestCgroupLauncherReal starts a daemon with the cgroup launcher and
// checks that it left the test's cgroups, lives, and stops.
func TestCgroupLauncherReal(t *testing.T) {
	hs := realCgroupRoot(t)
	name := fmt.Sprintf("%s-test-%d-%d", DaemonCgroupName, os.Getpid(), time.Now().UnixNano())
	l := cgroupLauncher{root: "/sys/fs/cgroup", name: name}
	logPath := filepath.Join(t.TempDir(), "daemon.log")
	var d Daemon
	startSleep(t, hs, name, func(cmd Command) (int, func()) {
		var err error
		if d, err = l.Start("vol", cmd, "/unused", logPath); err != nil {
			t.Fatal(err)
		}
		return d.PID, func() { _, _ = waitGone(context.Background(), d, 5*time.Second, l.Alive) }
	})
	if d.StartTime == 0 {
		t.Errorf("Start() = %+v, want a start time", d)
	}
	if !l.Alive(d) {
		t.Fatal("daemon not alive after Start")
	}
	assertInCgroup(t, d.PID, name, hs)
	if err := l.Stop(d, 5*time.Second); err != nil {
		t.Errorf("Stop() = %v", err)
	}
	if l.Alive(d) {
		t.Error("daemon alive after Stop")
	}
}

func TestNewLauncher(t *testing.T) {
	fakeRoot := t.TempDir()
	writeTree(t, fakeRoot, map[string]string{"pids/cgroup.procs": ""})
	testCases := []struct {
		name, systemd, cgroupRoot, memoryMax string
		want                                 Launcher
		wantErr                              bool
	}{
		{name: "session", systemd: "false", want: sessionLauncher{}},
		{name: "cgroup", systemd: "false", cgroupRoot: fakeRoot, want: cgroupLauncher{root: fakeRoot, name: DaemonCgroupName}},
		{name: "systemd wins", systemd: "true", cgroupRoot: fakeRoot, want: systemdLauncher{}},
		{name: "systemd with a memory limit", systemd: "true", memoryMax: "2G", want: systemdLauncher{memoryMax: "2G"}},
		{name: "cgroup root without hierarchies", systemd: "false", cgroupRoot: t.TempDir(), wantErr: true},
		{name: "bad systemd", systemd: "maybe", wantErr: true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewLauncher(tc.systemd, tc.cgroupRoot, tc.memoryMax)
			if (err != nil) != tc.wantErr {
				t.Fatalf("NewLauncher() error = %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("NewLauncher() = %#v, want %#v", got, tc.want)
			}
		})
	}
}
