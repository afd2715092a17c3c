package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// Supervisor runs a Vendor's resource servers, one per Resource: it starts
// them and registers them with the kubelet, re-serves and re-registers them
// when the kubelet restarts, retries a failed start or registration with a
// jittered backoff, reloads the vendor on SIGHUP or a config-file change,
// and removes its sockets on shutdown.
type Supervisor struct {
	cfg    Config
	vendor Vendor
	status *Status

	resources []Resource
	servers   []*server

	// pending are the resources whose server failed to start or register;
	// retry tries them again when retryTimer fires.
	pending    []Resource
	retryDelay time.Duration
	retryTimer *time.Timer

	// Retry backoff and Register timeout; tests shorten them.
	retryBase, retryMax time.Duration
	registerTimeout     time.Duration

	observe func(Event)
}

// Registration retry backoff: the first retry after retryBase, doubling up
// to retryMax, each with ±20% jitter.
const (
	retryBase = time.Second
	retryMax  = 30 * time.Second
)

// Event reports something the Supervisor did, for tests and benchmarks.
type Event struct {
	// Kind is EventServed (servers (re)started and registered),
	// EventRetried (failed servers were tried again) or EventReloaded (a
	// reload was tried; Err says why it was rejected).
	Kind string
	// Err is the reload error, if any.
	Err error
}

// Event kinds.
const (
	EventServed   = "served"
	EventRetried  = "retried"
	EventReloaded = "reloaded"
)

// Observe sets a function called after each Event; call it before Run.
func (sup *Supervisor) Observe(f func(Event)) { sup.observe = f }

func (sup *Supervisor) emit(e Event) {
	if sup.observe != nil {
		sup.observe(e)
	}
}

// NewSupervisor returns a Supervisor for the vendor with the given
// configuration.
func NewSupervisor(cfg Config, v Vendor) *Supervisor {
	return &Supervisor{cfg: cfg, vendor: v, status: NewStatus(),
		retryBase: retryBase, retryMax: retryMax, registerTimeout: registerTimeout}
}

// Status returns the registration state of the supervisor's resources.
func (sup *Supervisor) Status() *Status { return sup.status }

// Run runs the plugin until ctx ends. It fails when the vendor's devices
// cannot be initialised and FailOnInitError is set; otherwise such a node
// advertises nothing and waits for a reload.
func Run(ctx context.Context, cfg Config, v Vendor) error {
	return NewSupervisor(cfg, v).Run(ctx)
}

// kubeletSocket returns the path of the kubelet's registration socket.
func (sup *Supervisor) kubeletSocket() string {
	return filepath.Join(sup.cfg.PluginDir, filepath.Base(pluginapi.KubeletSocket))
}

// Run implements the package-level Run.
func (sup *Supervisor) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("vendor", sup.vendor.Name())
	ctx = klog.NewContext(ctx, logger)

	w, err := newWatcher(sup.cfg.PluginDir, sup.kubeletSocket(), sup.cfg.ConfigFile)
	if err != nil {
		return err
	}
	defer func() { _ = w.Close() }()
	if sup.cfg.MetricsAddress != "" {
		stop, err := sup.serveStatus(ctx)
		if err != nil {
			return err
		}
		defer stop()
	}

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	if err := sup.startVendor(ctx); err != nil {
		if sup.cfg.FailOnInitError {
			return err
		}
		logger.Error(err, "Device initialisation failed; advertising nothing (fail-on-init-error is false)")
	}
	defer sup.stopAll(ctx)
	sup.serve(ctx)

	for {
		select {
		case <-ctx.Done():
			logger.Info("Shutting down")
			return nil
		case <-w.kubeletRestarted:
			logger.Info("Kubelet socket re-created; re-serving and re-registering")
			sup.stopServers()
			sup.serve(ctx)
		case <-w.configChanged:
			sup.reload(ctx, "config file changed")
		case <-hup:
			sup.reload(ctx, "SIGHUP")
		case <-sup.retryC():
			sup.retry(ctx)
		case err := <-w.errors:
			logger.Error(err, "Watching the plugin directory")
		}
	}
}

// reload asks the vendor to re-read its configuration and restarts
// everything when it changed. A bad file keeps the last good configuration.
func (sup *Supervisor) reload(ctx context.Context, reason string) {
	logger := klog.FromContext(ctx)
	changed, err := sup.vendor.Reload()
	if err != nil {
		logger.Error(err, "Rejected new configuration; keeping the last good one", "reason", reason)
		sup.emit(Event{Kind: EventReloaded, Err: err})
		return
	}
	if !changed {
		logger.V(2).Info("Configuration unchanged", "reason", reason)
		sup.emit(Event{Kind: EventReloaded})
		return
	}
	defer sup.emit(Event{Kind: EventReloaded})
	logger.Info("Configuration changed; restarting", "reason", reason)
	sup.stopAll(ctx)
	if err := sup.startVendor(ctx); err != nil {
		logger.Error(err, "Restarting devices after reload failed; advertising nothing")
	}
	sup.serve(ctx)
}

func (sup *Supervisor) startVendor(ctx context.Context) error {
	resources, err := sup.vendor.Start(ctx)
	if err != nil {
		_ = sup.vendor.Stop()
		return fmt.Errorf("starting %s devices: %w", sup.vendor.Name(), err)
	}
	sup.resources = resources
	return nil
}

// serve starts one server per resource. A server that fails to start or
// register is logged and retried with backoff until it registers, the
// kubelet restarts, the vendor reloads or the supervisor stops.
func (sup *Supervisor) serve(ctx context.Context) {
	names := make([]string, len(sup.resources))
	for i, r := range sup.resources {
		names[i] = r.Name()
	}
	sup.status.reset(names)
	sup.pending = sup.startServers(ctx, sup.resources)
	sup.retryDelay = sup.retryBase
	sup.scheduleRetry()
	sup.emit(Event{Kind: EventServed})
}

// retry starts the pending servers again and schedules the next try for
// those that still fail, with the delay doubled.
func (sup *Supervisor) retry(ctx context.Context) {
	sup.retryTimer = nil
	sup.pending = sup.startServers(ctx, sup.pending)
	sup.retryDelay = min(2*sup.retryDelay, sup.retryMax)
	sup.scheduleRetry()
	sup.emit(Event{Kind: EventRetried})
}

// startServers starts and registers a server per resource and returns the
// resources whose server failed.
func (sup *Supervisor) startServers(ctx context.Context, resources []Resource) []Resource {
	logger := klog.FromContext(ctx)
	var failed []Resource
	for _, r := range resources {
		s := newServer(r, sup.cfg.PluginDir, sup.kubeletSocket(), logger)
		s.registerTimeout = sup.registerTimeout
		if err := s.start(ctx); err != nil {
			logger.Error(err, "Starting device plugin server; will retry", "resource", r.Name())
			failed = append(failed, r)
			continue
		}
		sup.status.set(r.Name(), true)
		sup.servers = append(sup.servers, s)
	}
	return failed
}

// scheduleRetry arms the retry timer when servers are pending.
func (sup *Supervisor) scheduleRetry() {
	if len(sup.pending) == 0 {
		return
	}
	// ±20% jitter, so the plugins of a node do not retry in lockstep.
	d := time.Duration(float64(sup.retryDelay) * (0.8 + 0.4*rand.Float64()))
	sup.retryTimer = time.NewTimer(d)
}

// retryC is the retry timer's channel, nil when no retry is scheduled.
func (sup *Supervisor) retryC() <-chan time.Time {
	if sup.retryTimer == nil {
		return nil
	}
	return sup.retryTimer.C
}

// stopServers stops every server and cancels pending retries.
func (sup *Supervisor) stopServers() {
	for _, s := range sup.servers {
		s.shutdown()
		sup.status.set(s.res.Name(), false)
	}
	sup.servers = nil
	sup.pending = nil
	if sup.retryTimer != nil {
		sup.retryTimer.Stop()
		sup.retryTimer = nil
	}
}

// serveStatus serves the Status on cfg.MetricsAddress until the returned
// function is called.
func (sup *Supervisor) serveStatus(ctx context.Context) (func(), error) {
	l, err := net.Listen("tcp", sup.cfg.MetricsAddress)
	if err != nil {
		return nil, fmt.Errorf("listening on metrics address %s: %w", sup.cfg.MetricsAddress, err)
	}
	srv := &http.Server{Handler: sup.status.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "Serving metrics")
		}
	}()
	klog.FromContext(ctx).Info("Serving metrics and readiness", "address", l.Addr().String())
	return func() {
		_ = srv.Close()
		<-done
	}, nil
}

func (sup *Supervisor) stopAll(ctx context.Context) {
	sup.stopServers()
	if err := sup.vendor.Stop(); err != nil {
		klog.FromContext(ctx).Error(err, "Stopping vendor")
	}
	sup.resources = nil
}

// errNoPluginDir is returned when the plugin directory does not exist.
var errNoPluginDir = errors.New("device plugin directory does not exist")
