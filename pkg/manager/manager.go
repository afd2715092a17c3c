// Package manager builds the controller-runtime manager that cmd/controllers
// runs. Each controller adds itself here with a setup function.
package manager

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/accelstack/accelstack/api"
)

// Options configures the manager.
type Options struct {
	// MetricsAddr is where /metrics is served; "0" disables it.
	MetricsAddr string
	// ProbeAddr is where /healthz and /readyz are served; "0" disables them.
	ProbeAddr string
	// LeaderElect makes replicas elect one active manager.
	LeaderElect bool
	// LeaderElectionNamespace holds the election lease; empty means the pod's namespace.
	LeaderElectionNamespace string
}

// LeaderElectionID names the lease replicas of cmd/controllers compete for.
const LeaderElectionID = "controllers.tensorstack.dev"

// NewScheme returns a scheme with the core Kubernetes types and every accelstack API.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("adding core types: %w", err)
	}
	if err := api.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("adding accelstack APIs: %w", err)
	}
	return s, nil
}

// The manager records events for every controller.
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// New returns a manager for cfg with health checks and every controller set up.
func New(cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:  opts.ProbeAddr,
		LeaderElection:          opts.LeaderElect,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding ready check: %w", err)
	}
	return mgr, nil
}
