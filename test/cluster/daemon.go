package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// daemon is a cluster process: started detached from the caller (its own
// session, output to a log file) so the cluster outlives `cluster up`, and
// recorded by PID and start time so Down stops exactly that process.
type daemon struct {
	Name      string   `json:"name"`
	PID       int      `json:"pid"`
	StartTime uint64   `json:"startTime"`
	Args      []string `json:"args"`
}

// startDaemon starts bin with args, appends its output to logs/<name>.log
// and records it in pids/<name>.json.
func startDaemon(l layout, name, bin string, args ...string) (*daemon, error) {
	if err := os.MkdirAll(l.logs(), 0o700); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(l.pids(), 0o700); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(filepath.Join(l.logs(), name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = l.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	// Reap it if it exits while this process lives; after that, init does.
	go func() { _ = cmd.Wait() }()
	d := &daemon{Name: name, PID: cmd.Process.Pid, Args: append([]string{bin}, args...)}
	d.StartTime, _ = procStartTime(d.PID)
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	return d, os.WriteFile(filepath.Join(l.pids(), name+".json"), b, 0o600)
}

// loadDaemon reads the record of name; nil if there is none.
func loadDaemon(l layout, name string) (*daemon, error) {
	var d daemon
	if found, err := readJSON(filepath.Join(l.pids(), name+".json"), &d); !found || err != nil {
		return nil, err
	}
	return &d, nil
}

// alive reports whether the recorded process still runs: same PID, same
// start time, not a zombie.
func (d *daemon) alive() bool {
	if d == nil || d.PID <= 0 {
		return false
	}
	state, start, err := procState(d.PID)
	if err != nil || state == "Z" || state == "X" {
		return false
	}
	return d.StartTime == 0 || start == d.StartTime
}

// stop sends SIGTERM, then SIGKILL after grace, waits for the process to
// go, and removes its record.
func (d *daemon) stop(l layout, grace time.Duration) error {
	defer os.Remove(filepath.Join(l.pids(), d.Name+".json"))
	if !d.alive() {
		return nil
	}
	_ = syscall.Kill(d.PID, syscall.SIGTERM)
	if d.waitGone(grace) {
		return nil
	}
	_ = syscall.Kill(d.PID, syscall.SIGKILL)
	if d.waitGone(10 * time.Second) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) survived SIGKILL", d.Name, d.PID)
}

func (d *daemon) waitGone(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for d.alive() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// procState returns the state letter and start time (clock ticks after
// boot) of a process from /proc/PID/stat.
func procState(pid int) (string, uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return "", 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	return fields[0], start, err
}

func procStartTime(pid int) (uint64, error) {
	_, start, err := procState(pid)
	return start, err
}

// processes returns the PID and command line of every process whose
// command line satisfies match.
func processes(match func(cmdline []string) bool) map[int][]string {
	out := map[int][]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if match(args) {
			out[pid] = args
		}
	}
	return out
}
