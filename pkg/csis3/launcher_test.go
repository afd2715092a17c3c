package csis3

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSystemdRunArgs checks the transient unit's properties: a lazy
// unmount after the daemon stops, the memory limit, and the command.
func TestSystemdRunArgs(t *testing.T) {
	l := systemdLauncher{memoryMax: "2G"}
	cmd := Command{Path: "/usr/bin/rclone", Args: []string{"mount", "s3:b", "/var/lib/kubelet/x y/globalmount"}}
	got := l.runArgs("csi-s3-v.service", cmd, `/var/lib/kubelet/x y/$HOME%n"`, "/state/daemon.log")
	want := []string{
		"--unit=csi-s3-v.service", "--collect", "--quiet",
		"--property=Type=simple", "--property=KillMode=mixed",
		"--property=StandardOutput=append:/state/daemon.log", "--property=StandardError=append:/state/daemon.log",
		`--property=ExecStopPost=-/bin/umount -l "/var/lib/kubelet/x y/$$HOME%%n\""`,
		"--setenv=HOME=/nonexistent", "--property=MemoryMax=2G",
		"--", "/usr/bin/rclone", "mount", "s3:b", "/var/lib/kubelet/x y/globalmount",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runArgs (-want +got):\n%s", diff)
	}
	if got := (systemdLauncher{}).runArgs("u", cmd, "/m", "/l"); strings.Contains(strings.Join(got, " "), "MemoryMax") {
		t.Errorf("runArgs without a limit = %q, want no MemoryMax", got)
	}
}

// TestSystemdStartNeedsAbsolutePath refuses a bare executable name, which
// systemd would look up in the host's PATH.
func TestSystemdStartNeedsAbsolutePath(t *testing.T) {
	_, err := systemdLauncher{}.Start("v", Command{Path: "rclone"}, "/m", "/l")
	if err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Fatalf("Start(rclone) = %v, want an error about an absolute path", err)
	}
}
