package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// Manager runs a Vendor's resource servers: it starts them, re-serves and
// re-registers them when the kubelet restarts, reloads the vendor on SIGHUP
// or a config-file change, and removes its sockets on shutdown.
type Manager struct {
	cfg    Config
	vendor Vendor

	managers []ResourceManager
	servers  []*server

	observe func(Event)
}

// Event reports something the Manager did, for tests and benchmarks.
type Event struct {
	// Kind is EventServed (servers (re)started and registered) or
	// EventReloaded (a reload was tried; Err says why it was rejected).
	Kind string
	// Err is the reload error, if any.
	Err error
}

// Event kinds.
const (
	EventServed   = "served"
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
	return &Manager{cfg: cfg, vendor: v}
}

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
// register is logged and retried at the next kubelet restart or reload.
func (m *Manager) serve(ctx context.Context) {
	logger := klog.FromContext(ctx)
	for _, rm := range m.managers {
		s := newServer(rm, m.cfg.PluginDir, m.kubeletSocket(), logger)
		if err := s.start(ctx); err != nil {
			logger.Error(err, "Starting device plugin server", "resource", rm.Resource())
			continue
		}
		m.servers = append(m.servers, s)
	}
	m.emit(Event{Kind: EventServed})
}

func (m *Manager) stopServers() {
	for _, s := range m.servers {
		s.shutdown()
	}
	m.servers = nil
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
