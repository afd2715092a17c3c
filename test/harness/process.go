package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/accelstack/accelstack/test/testutil"
)

// Process is a child process started by a test. Its output goes to a log file
// that the test prints if it fails; t.Cleanup stops it.
type Process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	waitErr error
}

// RunProcess starts bin with args and extra environment variables, writing
// its output to logPath. The caller must Stop it.
func RunProcess(name, bin string, args []string, logPath string, env ...string) (*Process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating log for %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	p := &Process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// StartProcess is RunProcess for a test: the log goes to a test temp dir and
// is printed if the test fails, and t.Cleanup stops the process.
func StartProcess(t testutil.T, name, bin string, args []string, env ...string) *Process {
	t.Helper()
	p, err := RunProcess(name, bin, args, filepath.Join(t.TempDir(), name+".log"), env...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Logf("stopping %s: %v", name, err)
		}
		if t.Failed() {
			t.Logf("log of %s:\n%s", name, p.Log())
		}
	})
	return p
}

// Pid returns the process's id, for reading its /proc entries.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Log returns the last 8 KiB of the process's output.
func (p *Process) Log() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", p.logPath, err)
	}
	if len(b) > 8<<10 {
		b = b[len(b)-8<<10:]
	}
	return string(b)
}

// Stop sends SIGTERM to the process group, then SIGKILL after 10 seconds.
// Stopping an exited process is not an error.
func (p *Process) Stop() error {
	if p.Exited() {
		return nil
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("%s ignored SIGTERM for 10s and was killed", p.name)
}

// WaitReady polls probe every 100ms until it succeeds, the process exits, or
// timeout passes. The error carries the last probe error and the process log.
func (p *Process) WaitReady(timeout time.Duration, probe func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for {
		if p.Exited() {
			return fmt.Errorf("%s exited before it was ready (%w):\n%s", p.name, p.waitErr, p.Log())
		}
		probeCtx, probeCancel := context.WithTimeout(ctx, 2*time.Second)
		last = probe(probeCtx)
		probeCancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %w\n%s", p.name, timeout, errors.Join(last, ctx.Err()), p.Log())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Ports FreePort picks from: below Linux's default ephemeral range
// (32768-60999), from which the kernel gives the local ports of outgoing
// connections. A port the kernel handed out for FreePort's own probe
// would be free again at once, and the next outgoing connection could take
// it before the test's server binds it.
const (
	freePortLow  = 20000
	freePortHigh = 32000
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago,
// outside the range of the local ports of outgoing connections.
func FreePort() (int, error) {
	for range 100 {
		port := freePortLow + rand.IntN(freePortHigh-freePortLow)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			l.Close()
			return port, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePort is FreePort for a test.
func freePort(t testutil.T) int {
	t.Helper()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
