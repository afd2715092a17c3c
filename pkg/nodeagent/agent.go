package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/nodeclient/nodelabel"
	"github.com/accelstack/accelstack/pkg/nvidia/simulator"
	"github.com/accelstack/accelstack/pkg/simcontrol"
	"github.com/accelstack/accelstack/pkg/version"
)

// UserAgent is how the agent shows in the API server's logs and metrics.
const UserAgent = "accelstack-node-agent"

// Defaults of the agent's settings.
const (
	DefaultCollectInterval   = 10 * time.Second
	DefaultHealthQuietPeriod = 5 * time.Minute
)

// Config configures the agent.
type Config struct {
	// Address is where /metrics and /healthz are served, e.g. ":9400".
	Address string
	// NodeName is this node's name; empty runs without a cluster.
	NodeName string
	// Kubeconfig is a kubeconfig path; empty means in-cluster.
	Kubeconfig string
	// Backend is the device backend: a vendor's library (nvml, dcmi) or
	// simulated; Backends lists them.
	Backend string
	// Simulate is the simulated machine profile when Backend is simulated,
	// a profile of one vendor's simulator, which picks the vendor.
	Simulate string
	// PodResourcesSocket is the kubelet PodResources API socket; empty
	// disables pod attribution.
	PodResourcesSocket string
	// CollectInterval is the time between collections (default 10s).
	CollectInterval time.Duration
	// ConfigFile is the device plugin's api/config/v1 file (MIG strategy,
	// time-slicing), read at every collection for the node labels.
	ConfigFile string
	// MigStrategy, when set, overrides the config file's flags.migStrategy
	// as the device plugin's --mig-strategy flag does.
	MigStrategy string
	// HealthQuietPeriod is how long a device must go without a critical
	// XID before a passing NVML check makes it healthy again (default 5m,
	// as the device plugin).
	HealthQuietPeriod time.Duration
	// DisableHealthChecks and EnableHealthChecks are the device plugin's
	// DP_DISABLE_HEALTHCHECKS and DP_ENABLE_HEALTHCHECKS, so that
	// accelstack_gpu_healthy follows the plugin's rule.
	DisableHealthChecks, EnableHealthChecks string

	// DCMILibrary is the path or name of the Ascend DCMI library, with
	// Backend dcmi.
	DCMILibrary string
	// ControlSocket, with Backend simulated, is a unix socket serving the
	// simulator's control commands (pkg/simcontrol), e.g. "util 0 90" to
	// set a GPU's utilization; empty serves none. The device plugin
	// simulates the same machine in another process, with a socket of its
	// own.
	ControlSocket string

	// Simulator, when set with Backend simulated, is the NVIDIA machine to
	// read.
	Simulator *simulator.Simulator
	// Sources, when set, replace the backend's source.
	Sources []Source
	// PodLister, when set, replaces the PodResources client.
	PodLister PodLister
	// LabelApplier, when set, replaces the Node labeler built from
	// Kubeconfig and NodeName.
	LabelApplier LabelApplier
}

// Agent serves the node's metrics and keeps its labels.
type Agent struct {
	cfg       Config
	sources   []Source
	collector *Collector
	metrics   *metricsHandler
}

// New returns an agent for cfg. Only invalid settings are errors: a
// missing device library, kubelet socket or cluster are logged by Run
// and the agent serves what it can.
func New(ctx context.Context, cfg Config) (*Agent, error) {
	log := klog.FromContext(ctx)
	if cfg.CollectInterval <= 0 {
		cfg.CollectInterval = DefaultCollectInterval
	}
	if cfg.HealthQuietPeriod <= 0 {
		cfg.HealthQuietPeriod = DefaultHealthQuietPeriod
	}
	sources, err := buildSources(ctx, cfg)
	if err != nil {
		return nil, err
	}
	pods := cfg.PodLister
	if pods == nil && cfg.PodResourcesSocket != "" {
		pods = &PodResourcesClient{Socket: cfg.PodResourcesSocket}
	}
	labels := cfg.LabelApplier
	if labels == nil && cfg.NodeName != "" {
		restCfg, err := nodelabel.RESTConfig(cfg.Kubeconfig, UserAgent)
		var labeler *NodeLabeler
		if err == nil {
			labeler, err = NewNodeLabeler(restCfg, cfg.NodeName)
		}
		if err != nil {
			log.Error(err, "No cluster access: serving metrics without node labels", "node", cfg.NodeName)
		} else {
			labels = labeler
		}
	}
	hostname := cfg.NodeName
	if hostname == "" {
		hostname, _ = os.Hostname()
	}
	c := NewCollector(hostname, sources, pods, labels)

	// The registry holds the small live families; the metrics handler
	// encodes the device families once per snapshot, after collecting.
	reg := prometheus.NewRegistry()
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace:   "accelstack",
		Name:        "build_info",
		Help:        "Build of the running node agent; always 1.",
		ConstLabels: prometheus.Labels{"version": version.Get().GitVersion, "component": "node-agent"},
	})
	buildInfo.Set(1)
	handlerErrors := newHandlerErrors()
	live := append([]prometheus.Collector{
		buildInfo,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		handlerErrors,
	}, c.selfCollectors()...)
	for _, col := range live {
		if err := reg.Register(col); err != nil {
			return nil, fmt.Errorf("registering collector: %w", err)
		}
	}
	metrics := &metricsHandler{snap: c.Snapshot, live: reg, errors: handlerErrors}
	c.collected = metrics.prepare
	a := &Agent{cfg: cfg, sources: sources, collector: c, metrics: metrics}
	if cfg.ControlSocket != "" && a.simulatorCommands() == nil {
		return nil, errors.New("a simulator control socket needs the simulated backend")
	}
	return a, nil
}

// simulatorCommands returns the control-command handler of the first
// source that reads a simulated machine, or nil.
func (a *Agent) simulatorCommands() func(line string) error {
	for _, src := range a.sources {
		switch s := src.(type) {
		case *NVIDIASource:
			if s.sim != nil {
				return s.sim.RunCommand
			}
		case *AscendSource:
			if c, ok := s.sim.(interface{ RunCommand(line string) error }); ok {
				return c.RunCommand
			}
		}
	}
	return nil
}

// buildSources returns the configured sources, or the source of the
// vendor the backend (and simulated profile) names.
func buildSources(ctx context.Context, cfg Config) ([]Source, error) {
	if cfg.Sources != nil {
		return cfg.Sources, nil
	}
	v, err := vendorFor(cfg)
	if err != nil {
		return nil, err
	}
	src, err := v.newSource(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return []Source{src}, nil
}

// Collector returns the agent's collector.
func (a *Agent) Collector() *Collector { return a.collector }

// Handler returns the agent's HTTP handler: /metrics and /healthz.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", a.metrics)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// Run serves until ctx ends.
func (a *Agent) Run(ctx context.Context) error {
	l, err := net.Listen("tcp", a.cfg.Address)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", a.cfg.Address, err)
	}
	return a.Serve(ctx, l)
}

// Serve collects on the interval and serves on l until ctx ends.
func (a *Agent) Serve(ctx context.Context, l net.Listener) error {
	log := klog.FromContext(ctx)
	if a.cfg.NodeName == "" {
		log.Info("No --node-name given: serving metrics only, without node labels")
	}
	if a.collector.pods == nil {
		log.Info("No PodResources socket: serving metrics without pod labels")
	}
	if a.cfg.ControlSocket != "" {
		control, err := simcontrol.Serve(ctx, a.cfg.ControlSocket, a.simulatorCommands())
		if err != nil {
			return err
		}
		defer control.Close()
		log.Info("Serving the simulator control socket", "path", a.cfg.ControlSocket)
	}
	collectCtx, stopCollect := context.WithCancel(ctx)
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		a.collector.Run(collectCtx, a.cfg.CollectInterval)
	}()
	defer func() {
		stopCollect()
		<-collected
		if err := a.collector.Close(); err != nil {
			log.Error(err, "Closing device sources")
		}
	}()

	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	log.Info("Serving metrics", "address", l.Addr().String(), "collectInterval", a.cfg.CollectInterval.String())
	select {
	case err := <-errc:
		return fmt.Errorf("serving metrics: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stopping metrics server: %w", err)
	}
	return nil
}
