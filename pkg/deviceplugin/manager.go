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

// Manager runs a Vendor's resource servers: it starts them, re-serves and
// re-registers them when the kubelet restarts, retries a failed start or
// registration with a jittered backoff, reloads the vendor on SIGHUP or a
// config-file change, and removes its sockets on shutdown.
type Manager struct {
	cfg    Config
	vendor Vendor
	status *Status

	managers []ResourceManager
	servers  []*server

	// pending are the managers whose server failed to start or register;
	// retry tries them again when retryTimer fires.
	pending    []ResourceManager
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

// Event reports something the Manager did, for tests and benchmarks.
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
func (m *Manager) Observe(f func(Event)) { m.observe = f }

func (m *Manager) emit(e Event) {
	if m.observe != nil {
		m.observe(e)
	}
}

// New returns a Manager for the vendor with the given configuration.
func New(cfg Config, v Vendor) *Manager {
	return &Manager{cfg: cfg, vendor: v, status: NewStatus(),
		retryBase: retryBase, retryMax: retryMax, registerTimeout: registerTimeout}
}

// Status returns the registration state of the manager's resources.
func (m *Manager) Status() *Status { return m.status }

// Run runs the plugin until ctx ends. It fails when the vendor's devices
// cannot be initialised and FailOnInitError is set; otherwise such a node
// advertises nothing and waits for a reload.
func Run(ctx context.Context, cfg Config, v Vendor) error {
	return New(cfg, v).Run(ctx)
}

// kubeletSocket returns the path of the kubelet's registration socket.
func (m *Manager) kubeletSocket() string {
	return filepath.Join(m.cfg.PluginDir, filepath.Base(pluginapi.KubeletSocket))
}

// Run implements the package-level Run.
func (m *Manager) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("vendor", m.vendor.Name())
	ctx = klog.NewContext(ctx, logger)

	w, err := newWatcher(m.cfg.PluginDir, m.kubeletSocket(), m.cfg.ConfigFile)
	if err != nil {
		return err
	}
	defer func() { _ = w.Close() }()
	if m.cfg.MetricsAddress != "" {
		stop, err := m.serveStatus(ctx)
		if err != nil {
			return err
		}
		defer stop()
	}

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	if err := m.startVendor(ctx); err != nil {
		if m.cfg.FailOnInitError {
			return err
		}
		logger.Error(err, "Device initialisation failed; advertising nothing (fail-on-init-error is false)")
	}
	defer m.stopAll(ctx)
	m.serve(ctx)

	for {
		select {
		case <-ctx.Done():
			logger.Info("Shutting down")
			return nil
		case <-w.kubeletRestarted:
			logger.Info("Kubelet socket re-created; re-serving and re-registering")
			m.stopServers()
			m.serve(ctx)
		case <-w.configChanged:
			m.reload(ctx, "config file changed")
		case <-hup:
			m.reload(ctx, "SIGHUP")
		case <-m.retryC():
			m.retry(ctx)
		case err := <-w.errors:
			logger.Error(err, "Watching the plugin directory")
		}
	}
}

// reload asks the vendor to re-read its configuration and restarts
// everything when it changed. A bad file keeps the last good configuration.
func (m *Manager) reload(ctx context.Context, reason string) {
	logger := klog.FromContext(ctx)
	changed, err := m.vendor.Reload()
	if err != nil {
		logger.Error(err, "Rejected new configuration; keeping the last good one", "reason", reason)
		m.emit(Event{Kind: EventReloaded, Err: err})
		return
	}
	if !changed {
		logger.V(2).Info("Configuration unchanged", "reason", reason)
		m.emit(Event{Kind: EventReloaded})
		return
	}
	defer m.emit(Event{Kind: EventReloaded})
	logger.Info("Configuration changed; restarting", "reason", reason)
	m.stopAll(ctx)
	if err := m.startVendor(ctx); err != nil {
		logger.Error(err, "Restarting devices after reload failed; advertising nothing")
	}
	m.serve(ctx)
}

func (m *Manager) startVendor(ctx context.Context) error {
	rms, err := m.vendor.Start(ctx)
	if err != nil {
		_ = m.vendor.Stop()
		return fmt.Errorf("starting %s devices: %w", m.vendor.Name(), err)
	}
	m.managers = rms
	return nil
}

// serve starts one server per resource. A server that fails to start or
// register is logged and retried with backoff until it registers, the
// kubelet restarts, the vendor reloads or the manager stops.
func (m *Manager) serve(ctx context.Context) {
	resources := make([]string, len(m.managers))
	for i, rm := range m.managers {
		resources[i] = rm.Resource()
	}
	m.status.reset(resources)
	m.pending = m.startServers(ctx, m.managers)
	m.retryDelay = m.retryBase
	m.scheduleRetry()
	m.emit(Event{Kind: EventServed})
}

// retry starts the pending servers again and schedules the next try for
// those that still fail, with the delay doubled.
func (m *Manager) retry(ctx context.Context) {
	m.retryTimer = nil
	m.pending = m.startServers(ctx, m.pending)
	m.retryDelay = min(2*m.retryDelay, m.retryMax)
	m.scheduleRetry()
	m.emit(Event{Kind: EventRetried})
}

// startServers starts and registers a server per manager and returns the
// managers whose server failed.
func (m *Manager) startServers(ctx context.Context, rms []ResourceManager) []ResourceManager {
	logger := klog.FromContext(ctx)
	var failed []ResourceManager
	for _, rm := range rms {
		s := newServer(rm, m.cfg.PluginDir, m.kubeletSocket(), logger)
		s.registerTimeout = m.registerTimeout
		if err := s.start(ctx); err != nil {
			logger.Error(err, "Starting device plugin server; will retry", "resource", rm.Resource())
			failed = append(failed, rm)
			continue
		}
		m.status.set(rm.Resource(), true)
		m.servers = append(m.servers, s)
	}
	return failed
}

// scheduleRetry arms the retry timer when servers are pending.
func (m *Manager) scheduleRetry() {
	if len(m.pending) == 0 {
		return
	}
	// ±20% jitter, so the plugins of a node do not retry in lockstep.
	d := time.Duration(float64(m.retryDelay) * (0.8 + 0.4*rand.Float64()))
	m.retryTimer = time.NewTimer(d)
}

// retryC is the retry timer's channel, nil when no retry is scheduled.
func (m *Manager) retryC() <-chan time.Time {
	if m.retryTimer == nil {
		return nil
	}
	return m.retryTimer.C
}

// stopServers stops every server and cancels pending retries.
func (m *Manager) stopServers() {
	for _, s := range m.servers {
		s.shutdown()
		m.status.set(s.rm.Resource(), false)
	}
	m.servers = nil
	m.pending = nil
	if m.retryTimer != nil {
		m.retryTimer.Stop()
		m.retryTimer = nil
	}
}

// serveStatus serves the Status on cfg.MetricsAddress until the returned
// function is called.
func (m *Manager) serveStatus(ctx context.Context) (func(), error) {
	l, err := net.Listen("tcp", m.cfg.MetricsAddress)
	if err != nil {
		return nil, fmt.Errorf("listening on metrics address %s: %w", m.cfg.MetricsAddress, err)
	}
	srv := &http.Server{Handler: m.status.Handler(), ReadHeaderTimeout: 10 * time.Second}
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

func (m *Manager) stopAll(ctx context.Context) {
	m.stopServers()
	if err := m.vendor.Stop(); err != nil {
		klog.FromContext(ctx).Error(err, "Stopping vendor")
	}
	m.managers = nil
}

// errNoPluginDir is returned when the plugin directory does not exist.
var errNoPluginDir = errors.New("device plugin directory does not exist")
