// Package nodeagent is the node agent: it serves accelerator metrics for
// Prometheus and keeps the node's accelerator labels current.
package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/version"
)

// Config configures the agent.
type Config struct {
	// Address is where /metrics and /healthz are served, e.g. ":9400".
	Address string
	// NodeName is this node's name; empty runs without a cluster.
	NodeName string
	// Kubeconfig is a kubeconfig path; empty means in-cluster.
	Kubeconfig string
	// Backend is the device backend: nvml, dcmi or simulated.
	Backend string
	// Simulate is the simulated machine profile when Backend is simulated.
	Simulate string
	// PodResourcesSocket is the kubelet PodResources API socket.
	PodResourcesSocket string
}

// Agent serves the node's metrics.
type Agent struct {
	cfg      Config
	registry *prometheus.Registry
}

// New returns an agent for cfg.
func New(cfg Config) (*Agent, error) {
	reg := prometheus.NewRegistry()
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace:   "accelstack",
		Name:        "build_info",
		Help:        "Build of the running node agent; always 1.",
		ConstLabels: prometheus.Labels{"version": version.Get().GitVersion, "component": "node-agent"},
	})
	buildInfo.Set(1)
	for _, c := range []prometheus.Collector{
		buildInfo,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering collector: %w", err)
		}
	}
	return &Agent{cfg: cfg, registry: reg}, nil
}

// Handler returns the agent's HTTP handler: /metrics and /healthz.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(a.registry, promhttp.HandlerOpts{Registry: a.registry}))
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

// Serve serves on l until ctx ends.
func (a *Agent) Serve(ctx context.Context, l net.Listener) error {
	log := klog.FromContext(ctx)
	if a.cfg.NodeName == "" {
		log.Info("No --node-name given: serving metrics only, without node labels or pod attribution")
	}
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	log.Info("Serving metrics", "address", l.Addr().String())
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
