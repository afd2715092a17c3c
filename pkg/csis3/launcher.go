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
	"time"

	"k8s.io/klog/v2"
)

// Launcher starts FUSE daemons so that they outlive the plugin process.
type Launcher interface {
	// Start starts cmd, which mounts at mountPoint, detached from the
	// plugin with its output appended to logPath. name is unique per
	// volume on the node.
	Start(name string, cmd Command, mountPoint, logPath string) (Daemon, error)
	// Alive reports whether the daemon still runs; an exited, zombie or
	// reused PID is not alive.
	Alive(d Daemon) bool
	// Stop ends the daemon: SIGTERM, then SIGKILL after grace. Stopping a
	// daemon that has exited is not an error.
	Stop(d Daemon, grace time.Duration) error
}

// Daemon identifies a running FUSE daemon.
type Daemon struct {
	// PID and StartTime (clock ticks after boot, from /proc/PID/stat)
	// identify a process across PID reuse.
	PID       int    `json:"pid,omitempty"`
	StartTime uint64 `json:"startTime,omitempty"`
	// Unit is the systemd unit, for daemons started by systemd.
	Unit string `json:"unit,omitempty"`
}

// stopGrace is how long a stopped daemon has between SIGTERM and SIGKILL.
const stopGrace = 5 * time.Second

// commandTimeout bounds each systemctl and systemd-run, so a hung D-Bus
// fails the call instead of hanging it.
const commandTimeout = 30 * time.Second

// NewLauncher returns the systemd launcher when useSystemd is "true", or
// "auto" and the host runs systemd, with memoryMax (systemd's MemoryMax=,
// none when empty) on each daemon's unit. Otherwise it returns the cgroup
// launcher when cgroupRoot is set (the host's cgroup hierarchies, which
// must be found there), else the session launcher.
func NewLauncher(useSystemd, cgroupRoot, memoryMax string) (Launcher, error) {
	switch useSystemd {
	case "true":
		return systemdLauncher{memoryMax: memoryMax}, nil
	case "false":
	case "auto", "":
		if _, err := os.Stat("/run/systemd/system"); err == nil {
			if _, err := exec.LookPath("systemd-run"); err == nil {
				return systemdLauncher{memoryMax: memoryMax}, nil
			}
		}
	default:
		return nil, fmt.Errorf("invalid value %q for flag --systemd: must be auto, true or false", useSystemd)
	}
	if cgroupRoot == "" {
		return sessionLauncher{}, nil
	}
	if _, err := cgroupHierarchies(cgroupRoot); err != nil {
		return nil, fmt.Errorf("invalid value %q for flag --daemon-cgroup-root: %w", cgroupRoot, err)
	}
	return cgroupLauncher{root: cgroupRoot, name: DaemonCgroupName}, nil
}

// sessionLauncher starts daemons in their own session (setsid) with no
// parent-death signal, so killing the plugin or its process group leaves
// them running. Daemons started by this process are reaped by it; those
// of an earlier plugin process are reaped by init.
type sessionLauncher struct{}

var _ Launcher = sessionLauncher{}

// Start starts cmd with setsid.
func (sessionLauncher) Start(_ string, cmd Command, _, logPath string) (Daemon, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return Daemon{}, fmt.Errorf("opening daemon log: %w", err)
	}
	defer logFile.Close()
	c := exec.Command(cmd.Path, cmd.Args...)
	c.Stdout, c.Stderr = logFile, logFile
	c.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/nonexistent"}
	c.Dir = "/"
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		return Daemon{}, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	go func() { _ = c.Wait() }()
	d := Daemon{PID: c.Process.Pid}
	d.StartTime, _ = procStartTime(d.PID)
	return d, nil
}

// Alive checks /proc.
func (sessionLauncher) Alive(d Daemon) bool { return pidAlive(d) }

// Stop signals the daemon and waits for it to go.
func (sessionLauncher) Stop(d Daemon, grace time.Duration) error {
	if !pidAlive(d) {
		return nil
	}
	_ = syscall.Kill(d.PID, syscall.SIGTERM)
	if gone, _ := waitGone(context.Background(), d, grace, pidAlive); gone {
		return nil
	}
	_ = syscall.Kill(d.PID, syscall.SIGKILL)
	if gone, _ := waitGone(context.Background(), d, grace, pidAlive); gone {
		return nil
	}
	return fmt.Errorf("daemon %d survived SIGKILL", d.PID)
}

// cgroupLauncher is the session launcher that also moves each daemon out
// of the plugin container's cgroup, into the cgroup name directly under
// the root of every hierarchy under root (the host's /sys/fs/cgroup). When
// the plugin's container stops, the runtime kills the processes of the
// container's PID namespace, or with hostPID those of its cgroup; a daemon
// in no namespace or cgroup of the container outlives it, on hosts without
// systemd.
type cgroupLauncher struct {
	sessionLauncher
	root, name string
}

var _ Launcher = cgroupLauncher{}

// Start starts cmd with setsid and moves it before returning, so before
// its mount is reported ready. A daemon that could be moved in no
// hierarchy is stopped and Start fails; hierarchies where the move failed
// are logged.
func (l cgroupLauncher) Start(name string, cmd Command, mountPoint, logPath string) (Daemon, error) {
	d, err := l.sessionLauncher.Start(name, cmd, mountPoint, logPath)
	if err != nil {
		return Daemon{}, err
	}
	moved, err := moveToCgroup(l.root, l.name, d.PID)
	if len(moved) == 0 {
		_ = l.Stop(d, stopGrace)
		return Daemon{}, fmt.Errorf("moving daemon %d to cgroup %s: %w", d.PID, l.name, err)
	}
	log := klog.Background().WithValues("pid", d.PID, "cgroup", l.name)
	if err != nil {
		log.Error(err, "Daemon left in the plugin's cgroup in some hierarchies; it may not outlive the plugin's container", "moved", moved)
	} else {
		log.V(4).Info("Moved daemon out of the plugin's cgroup", "hierarchies", moved)
	}
	return d, nil
}

// systemdLauncher runs each daemon as a transient systemd service on the
// host, which outlives the plugin's container as well as its process. The
// daemon's executable, config and mount point paths must be the same on
// the host as in the plugin (see deploy/daemonsets/csi-s3-node.yaml).
type systemdLauncher struct {
	// memoryMax is the units' MemoryMax=; none when empty.
	memoryMax string
}

var _ Launcher = systemdLauncher{}

// unitName is the transient unit for name.
func unitName(name string) string { return "csi-s3-" + name + ".service" }

// Start runs systemd-run. The executable must be an absolute path: a bare
// name would resolve against the host's PATH. After the daemon stops,
// the unit lazily unmounts mountPoint so a failed daemon leaves no dead
// mount behind; the unit is garbage-collected when done.
func (l systemdLauncher) Start(name string, cmd Command, mountPoint, logPath string) (Daemon, error) {
	if !filepath.IsAbs(cmd.Path) {
		return Daemon{}, fmt.Errorf("executable %q must be an absolute path when FUSE daemons run as systemd units", cmd.Path)
	}
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	unit := unitName(name)
	_ = exec.CommandContext(ctx, "systemctl", "reset-failed", unit).Run()
	args := l.runArgs(unit, cmd, mountPoint, logPath)
	out, err := exec.CommandContext(ctx, "systemd-run", args...).CombinedOutput()
	if err != nil {
		return Daemon{}, fmt.Errorf("systemd-run %s: %w: %s", unit, err, strings.TrimSpace(string(out)))
	}
	return Daemon{Unit: unit}, nil
}

// runArgs are systemd-run's arguments for Start.
func (l systemdLauncher) runArgs(unit string, cmd Command, mountPoint, logPath string) []string {
	args := []string{
		"--unit=" + unit, "--collect", "--quiet",
		"--property=Type=simple", "--property=KillMode=mixed",
		"--property=StandardOutput=append:" + logPath, "--property=StandardError=append:" + logPath,
		"--property=ExecStopPost=-/bin/umount -l " + systemdQuote(mountPoint),
		"--setenv=HOME=/nonexistent",
	}
	if l.memoryMax != "" {
		args = append(args, "--property=MemoryMax="+l.memoryMax)
	}
	return append(append(args, "--", cmd.Path), cmd.Args...)
}

// systemdQuote quotes one argument of a systemd command line: in double
// quotes, with backslashes and quotes escaped, and specifiers (%) and
// variables ($) doubled so systemd does not expand them.
func systemdQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$")
	return `"` + r.Replace(s) + `"`
}

// Alive asks systemd whether the unit is active.
func (systemdLauncher) Alive(d Daemon) bool {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	return exec.CommandContext(ctx, "systemctl", "is-active", "--quiet", d.Unit).Run() == nil
}

// Stop stops the unit; systemd escalates to SIGKILL after its timeout.
func (l systemdLauncher) Stop(d Daemon, grace time.Duration) error {
	if !l.Alive(d) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*grace+commandTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "systemctl", "stop", d.Unit).CombinedOutput()
	if err != nil {
		return fmt.Errorf("systemctl stop %s: %w: %s", d.Unit, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// pidAlive reports whether d's process runs: it exists, is no zombie, and
// started when d says.
func pidAlive(d Daemon) bool {
	if d.PID <= 0 {
		return false
	}
	fields, err := procStat(d.PID)
	if err != nil {
		return false
	}
	if fields[0] == "Z" || fields[0] == "X" {
		return false
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	return err == nil && (d.StartTime == 0 || start == d.StartTime)
}

// procStartTime returns a process's start time from /proc/PID/stat.
func procStartTime(pid int) (uint64, error) {
	fields, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// procStat returns the fields of /proc/PID/stat after the command name,
// starting with the state (field 3).
func procStat(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, errors.New("malformed /proc stat")
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return nil, errors.New("short /proc stat")
	}
	return fields, nil
}
