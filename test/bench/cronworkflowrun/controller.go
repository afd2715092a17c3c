package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/accelstack/accelstack/pkg/manager"
	"github.com/accelstack/accelstack/pkg/workflow/cron"
	"github.com/accelstack/accelstack/test/harness"
)

// The controller runs as a process of its own, this program started again
// with -controller, so that its CPU time is its own. It tells time by a
// fake clock that the bench sets through its standard input, one Unix time
// a line, and says "ready" on its standard output once its cache has
// synced.

// runController is the controller process: the CronWorkflowRun controller
// on a manager watching the bench's namespace, with a fake clock at start.
func runController(ctx context.Context, kubeconfig string, start time.Time) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// As cmd/controllers: no client-side rate limit.
	cfg.QPS = -1
	scheme, err := manager.NewScheme()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 logr.Discard(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	clock := clocktesting.NewFakeClock(start)
	if err := cron.Setup(mgr, cron.Options{Clock: clock}); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	syncCtx, syncCancel := context.WithTimeout(ctx, time.Minute)
	defer syncCancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		cancel()
		return fmt.Errorf("the manager's cache did not sync: %w", errors.Join(<-done, syncCtx.Err()))
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		sec, err := strconv.ParseInt(strings.TrimSpace(in.Text()), 10, 64)
		if err != nil {
			cancel()
			return errors.Join(fmt.Errorf("a time on standard input: %w", err), <-done)
		}
		clock.SetTime(time.Unix(sec, 0))
	}
	cancel()
	return errors.Join(in.Err(), <-done)
}

// controllerProcess is the controller process, seen from the bench.
type controllerProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startController starts the controller process and waits until it is
// ready.
func startController(kubeconfig string, start time.Time) (*controllerProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-controller", "-controller-kubeconfig", kubeconfig, "-start", strconv.FormatInt(start.Unix(), 10))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &controllerProcess{cmd: cmd, stdin: stdin}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && strings.TrimSpace(line) != "ready" {
			err = fmt.Errorf("the controller said %q", line)
		}
		ready <- err
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case err := <-ready:
		if err != nil {
			return nil, errors.Join(fmt.Errorf("starting the controller: %w", err), p.stop())
		}
	case <-time.After(2 * time.Minute):
		return nil, errors.Join(errors.New("the controller was not ready after 2 minutes"), p.stop())
	}
	return p, nil
}

// setTime sets the controller's clock.
func (p *controllerProcess) setTime(t time.Time) error {
	_, err := fmt.Fprintln(p.stdin, t.Unix())
	return err
}

// cpu is the controller's CPU time so far.
func (p *controllerProcess) cpu() (time.Duration, error) {
	return harness.ProcessCPU(p.cmd.Process.Pid)
}

// stop closes the controller's standard input, which stops it, and waits.
func (p *controllerProcess) stop() error {
	_ = p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		return errors.Join(errors.New("the controller did not stop; killed"), <-done)
	}
}
