package reclaim

import (
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
)

// Defaults of the Options.
const (
	DefaultProbePeriod        = time.Minute
	DefaultProbeTimeout       = 5 * time.Second
	DefaultWorkers            = 8
	DefaultNodeAgentNamespace = "accelstack-system"
	DefaultNodeAgentPort      = 9400
)

// Options configures the Resource Keeper.
type Options struct {
	// ProbePeriod is the time between two probes of every workload
	// (default 1m).
	ProbePeriod time.Duration
	// Defaults are the thresholds of the namespaces that annotate none;
	// zero fields mean DefaultConfig's.
	Defaults Config
	// NodeAgentNamespace is where the node agent's pods run (default
	// accelstack-system); they are found by NodeAgentLabelSelector.
	NodeAgentNamespace string
	// NodeAgentPort is where the node agent serves /metrics (default 9400).
	NodeAgentPort int
	// JupyterPort is where a notebook pod serves Jupyter's API: the
	// activity sidecar's port (the default, activity.HTTPPort), or the
	// notebook container's own (8888) to bypass the sidecar.
	JupyterPort int
	// JupyterBasePath returns the URL path of a notebook's Jupyter server
	// on its pod; nil means NBPrefix: the NB_PREFIX environment variable of
	// the notebook container, else the path of the Notebook's status.url.
	JupyterBasePath func(nb *tensorstackv1beta1.Notebook, pod *corev1.Pod) string
	// ProbeTimeout bounds each HTTP call of a probe (default 5s).
	ProbeTimeout time.Duration
	// Workers is how many workloads are probed at once (default 8).
	Workers int
	// Clock tells the time and paces the probes; nil means the real clock.
	Clock clock.Clock
	// HTTPClient makes the probes' calls; nil means a client with
	// ProbeTimeout. Tests give one whose transport dials their servers for
	// the pods' addresses.
	HTTPClient *http.Client
}

func (o Options) withDefaults() Options {
	if o.ProbePeriod <= 0 {
		o.ProbePeriod = DefaultProbePeriod
	}
	o.Defaults = o.Defaults.withDefaults()
	if o.NodeAgentNamespace == "" {
		o.NodeAgentNamespace = DefaultNodeAgentNamespace
	}
	if o.NodeAgentPort == 0 {
		o.NodeAgentPort = DefaultNodeAgentPort
	}
	if o.JupyterPort == 0 {
		o.JupyterPort = activity.HTTPPort
	}
	if o.JupyterBasePath == nil {
		o.JupyterBasePath = NBPrefix
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: o.ProbeTimeout}
	}
	return o
}

// Setup runs the Resource Keeper on mgr, as a runnable of the elected
// leader.
func Setup(mgr ctrl.Manager, opts Options) error {
	k := NewKeeper(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorder("resource-keeper"), opts).
		WithLogger(mgr.GetLogger().WithName("resource-keeper"))
	if err := mgr.Add(k); err != nil {
		return fmt.Errorf("adding the Resource Keeper: %w", err)
	}
	return nil
}
