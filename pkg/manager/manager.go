// Package manager builds the controller-runtime manager that cmd/controllers
// runs. Each controller adds itself here with a setup function.
package manager

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/accelstack/accelstack/api"
	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
	"github.com/accelstack/accelstack/pkg/cacheselector"
	"github.com/accelstack/accelstack/pkg/datacube"
	"github.com/accelstack/accelstack/pkg/elasticjob"
	"github.com/accelstack/accelstack/pkg/eventlistener"
	"github.com/accelstack/accelstack/pkg/explorer"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/beamjob"
	"github.com/accelstack/accelstack/pkg/jobs/kinds"
	"github.com/accelstack/accelstack/pkg/notebook"
	"github.com/accelstack/accelstack/pkg/project"
	"github.com/accelstack/accelstack/pkg/queues"
	"github.com/accelstack/accelstack/pkg/ranktable"
	"github.com/accelstack/accelstack/pkg/reclaim"
	"github.com/accelstack/accelstack/pkg/satoken"
	"github.com/accelstack/accelstack/pkg/serving/mlservice"
	"github.com/accelstack/accelstack/pkg/serving/simple"
	"github.com/accelstack/accelstack/pkg/shim"
	"github.com/accelstack/accelstack/pkg/tensorboard"
	"github.com/accelstack/accelstack/pkg/workflow"
	"github.com/accelstack/accelstack/pkg/workflow/cron"
	"github.com/accelstack/accelstack/pkg/workloadmetrics"
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
	// WebhookHost, WebhookPort and WebhookCertDir configure the webhook
	// server (CRD conversion, job validation, queue admission); the
	// directory holds tls.crt and tls.key.
	WebhookHost    string
	WebhookPort    int
	WebhookCertDir string
	// WebhookSelfSigned makes the manager issue its own webhook certificate
	// for WebhookServiceDNS at start and inject its CA into the CRDs and the
	// ValidatingWebhookConfigurations of the jobs and the queues.
	WebhookSelfSigned bool
	// WebhookServiceDNS is the DNS name of the webhook Service.
	WebhookServiceDNS string
	// S3DriverName is the CSI driver of StorageShim S3 volumes.
	S3DriverName string
	// CephFSDrivers are the CSI drivers CephFS StorageShims may use (the
	// default: shim.DefaultCephFSDriver); CephFSConfigMapNamespaces are the
	// namespaces besides a shim's own its cluster ConfigMap may be in.
	CephFSDrivers, CephFSConfigMapNamespaces []string
	// DataCubeExecutorImage is the image of DataCube transfer pods.
	DataCubeExecutorImage string
	// WorkflowToolsImage holds the step sequencer of SeqPod workflow runs.
	WorkflowToolsImage string
	// EventsImage runs the EventListener and WorkflowTrigger servers;
	// EventListenerHost is the external host listeners are served at.
	EventsImage, EventListenerHost string
	// GatewayHost is the gateway's host: the status URLs of Notebooks,
	// TensorBoards, Explorers and EventListeners are on it when set.
	// ServingDomain is the gateway's domain of serving hosts, where the
	// status URLs of MLServices on the raw backend are when set.
	GatewayHost, ServingDomain string
	// Gateway is the gateway's ServiceAccount, bound to the gateway's
	// rights in each Project namespace; nil binds none.
	Gateway *rbacv1.Subject
	// ActivityImage runs the activity sidecar of Notebooks, TensorBoards and
	// Explorers; TensorBoardImage, FileBrowserImage and CodeServerImage
	// run their servers.
	ActivityImage, TensorBoardImage, FileBrowserImage, CodeServerImage string
	// MLServiceBackend runs MLServices: auto (knative when the Knative
	// Service CRD is installed, raw otherwise), raw or knative;
	// ServingRouterImage runs their router.
	MLServiceBackend, ServingRouterImage string
	// ElasticJobMasterImage runs the masters of ElasticJobs whose template
	// names no image; empty means DLRover's own.
	ElasticJobMasterImage string
	// ResourceKeeper configures idle reclaim: the probe period, the
	// cluster-wide thresholds and where the node agent runs.
	ResourceKeeper reclaim.Options
	// KubeconfigServer and KubeconfigCAData are the API server address and
	// CA that ServiceAccountToken kubeconfigs point at; an empty server
	// means the manager's own.
	KubeconfigServer string
	KubeconfigCAData []byte
	// TokenMaxDuration bounds a ServiceAccountToken's spec.duration and is
	// what a duration of 0 means; 0 means satoken.DefaultMaxDuration.
	TokenMaxDuration time.Duration
	// SkipNameValidation allows several managers in one process (tests).
	SkipNameValidation bool
	// Logger is the manager's and controllers' logger; zero means ctrl.Log.
	Logger logr.Logger
}

// Run builds the manager for cfg and runs it until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	mgr, err := New(cfg, opts)
	if err != nil {
		return err
	}
	if opts.WebhookSelfSigned {
		// The manager's cached client is not started yet; use a direct one.
		c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
		if err != nil {
			return fmt.Errorf("creating client: %w", err)
		}
		renewer := &webhookCertRenewer{client: c, certDir: opts.WebhookCertDir, serviceDNS: opts.WebhookServiceDNS}
		if renewer.next, err = SelfSignedWebhookCert(ctx, c, opts.WebhookCertDir, opts.WebhookServiceDNS, ConvertedCRDs); err != nil {
			return err
		}
		if err := mgr.Add(renewer); err != nil {
			return fmt.Errorf("adding the webhook certificate renewer: %w", err)
		}
	}
	return mgr.Start(ctx)
}

// LeaderElectionID names the lease replicas of cmd/controllers compete for.
const LeaderElectionID = "controllers.tensorstack.dev"

// NewScheme returns a scheme with the core Kubernetes types and every accelstack API.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("adding core types: %w", err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("adding CRD types: %w", err)
	}
	if err := api.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("adding accelstack APIs: %w", err)
	}
	return s, nil
}

// CacheOptions restricts the manager's cache to the objects the controllers
// own, by label, rather than every pod, Job, PVC and ConfigMap of the
// cluster: DataCube Jobs and pods, StorageShim PVCs, and rank-table
// ConfigMaps (the rank-table controller keeps a cache of its own of these).
// A tenant can put these labels on objects of its own, so the cache also
// holds no more of each object than the controllers read: no managed
// fields; of pods, Jobs and PVCs nothing owns, a stub
// (StubUncontrolled); and of ConfigMaps, which no controller reads through
// this cache (the client reads them from the API server, Uncached), the
// metadata only (MetadataOnly), never the megabyte of data each may hold.
func CacheOptions() cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {
				Label:     cacheselector.HasLabel(datacube.NameLabelKey),
				Transform: cacheselector.StubUncontrolled(datacube.NameLabelKey),
			},
			&batchv1.Job{}: {
				Label:     cacheselector.HasLabel(datacube.NameLabelKey),
				Transform: cacheselector.StubUncontrolled(datacube.NameLabelKey),
			},
			&corev1.PersistentVolumeClaim{}: {
				Label:     cacheselector.HasLabel(shim.PVCLabelKey),
				Transform: cacheselector.StubUncontrolled(shim.PVCLabelKey),
			},
			&corev1.ConfigMap{}: {
				Label:     cacheselector.HasLabel(ranktable.RingControllerLabel),
				Transform: cacheselector.MetadataOnly(ranktable.RingControllerLabel),
			},
		},
	}
}

// Uncached are the kinds the manager's client reads straight from the API
// server, never through a cluster-wide cache: the Secrets and ConfigMaps that
// StorageShims name, each read when its shim is reconciled.
var Uncached = []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}

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
		Logger:                  opts.Logger,
		Metrics:                 metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:  opts.ProbeAddr,
		LeaderElection:          opts.LeaderElect,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		Controller:              config.Controller{SkipNameValidation: &opts.SkipNameValidation},
		Cache:                   CacheOptions(),
		Client:                  client.Options{Cache: &client.CacheOptions{DisableFor: Uncached}},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: opts.WebhookHost, Port: opts.WebhookPort, CertDir: opts.WebhookCertDir,
		}),
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := setupStorageShim(mgr, opts); err != nil {
		return nil, err
	}
	if err := datacube.NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorder("datacube-controller"),
		opts.DataCubeExecutorImage).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the DataCube controller: %w", err)
	}
	if err := ranktable.NewReconciler(mgr.GetClient(), mgr.GetAPIReader(),
		mgr.GetEventRecorder("ascend-ranktable-controller")).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the Ascend rank-table controller: %w", err)
	}
	if err := jobs.Setup(mgr, kinds.All(), jobs.Options{}); err != nil {
		return nil, fmt.Errorf("setting up the job controllers: %w", err)
	}
	if err := elasticjob.Setup(mgr, elasticjob.Options{MasterImage: opts.ElasticJobMasterImage}); err != nil {
		return nil, fmt.Errorf("setting up the ElasticJob controller: %w", err)
	}
	if err := beamjob.Setup(mgr); err != nil {
		return nil, fmt.Errorf("setting up the BeamJob controller: %w", err)
	}
	if err := queues.Setup(mgr, kinds.All()); err != nil {
		return nil, fmt.Errorf("setting up the queue controllers: %w", err)
	}
	if err := workflow.Setup(mgr, workflow.Options{
		ToolsImage: opts.WorkflowToolsImage, JobKinds: kinds.All(), TriggerRules: eventlistener.ValidateTrigger,
	}); err != nil {
		return nil, fmt.Errorf("setting up the WorkflowRun controller: %w", err)
	}
	if err := cron.Setup(mgr, cron.Options{}); err != nil {
		return nil, fmt.Errorf("setting up the CronWorkflowRun controller: %w", err)
	}
	if err := eventlistener.Setup(mgr, eventlistener.Options{Image: opts.EventsImage, ExternalHost: cmp.Or(opts.EventListenerHost, opts.GatewayHost)}); err != nil {
		return nil, fmt.Errorf("setting up the EventListener controller: %w", err)
	}
	if err := notebook.Setup(mgr, notebook.Options{ActivityImage: opts.ActivityImage, GatewayHost: opts.GatewayHost}); err != nil {
		return nil, fmt.Errorf("setting up the Notebook controller: %w", err)
	}
	if err := tensorboard.Setup(mgr, tensorboard.Options{Image: opts.TensorBoardImage, ActivityImage: opts.ActivityImage, GatewayHost: opts.GatewayHost}); err != nil {
		return nil, fmt.Errorf("setting up the TensorBoard controller: %w", err)
	}
	if err := explorer.Setup(mgr, explorer.Options{FileBrowserImage: opts.FileBrowserImage, CodeServerImage: opts.CodeServerImage, ActivityImage: opts.ActivityImage, GatewayHost: opts.GatewayHost}); err != nil {
		return nil, fmt.Errorf("setting up the Explorer controller: %w", err)
	}
	if err := project.Setup(mgr, project.Options{Gateway: opts.Gateway}); err != nil {
		return nil, fmt.Errorf("setting up the Project controller: %w", err)
	}
	if err := satoken.Setup(mgr, satoken.Options{
		Cluster: satoken.Cluster{Server: opts.KubeconfigServer, CAData: opts.KubeconfigCAData}, MaxDuration: opts.TokenMaxDuration,
	}); err != nil {
		return nil, fmt.Errorf("setting up the ServiceAccountToken controller: %w", err)
	}
	if err := workloadmetrics.Setup(mgr, kinds.Registered()); err != nil {
		return nil, err
	}
	if err := simple.Setup(mgr, simple.Options{StorageInitializerImage: opts.DataCubeExecutorImage}); err != nil {
		return nil, fmt.Errorf("setting up the SimpleMLService controller: %w", err)
	}
	if err := mlservice.Setup(mgr, mlservice.Options{
		Backend: opts.MLServiceBackend, RouterImage: opts.ServingRouterImage, StorageInitializerImage: opts.DataCubeExecutorImage,
		ServingDomain: opts.ServingDomain,
	}); err != nil {
		return nil, fmt.Errorf("setting up the MLService controller: %w", err)
	}
	if err := reclaim.Setup(mgr, opts.ResourceKeeper); err != nil {
		return nil, fmt.Errorf("setting up the Resource Keeper: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return nil, fmt.Errorf("adding ready check: %w", err)
	}
	return mgr, nil
}

// setupStorageShim registers the StorageShim controller and the conversion
// webhook between its v1beta1 and v1beta2 versions.
func setupStorageShim(mgr ctrl.Manager, opts Options) error {
	r := shim.NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorder("storageshim-controller"), opts.S3DriverName).
		AllowCephFS(opts.CephFSDrivers, opts.CephFSConfigMapNamespaces)
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the StorageShim controller: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &tensorstackv1beta2.StorageShim{}).Complete(); err != nil {
		return fmt.Errorf("setting up the StorageShim conversion webhook: %w", err)
	}
	return nil
}
