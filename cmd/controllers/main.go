// Command controllers runs the accelstack controllers (StorageShim, DataCube,
// T9k Jobs, the queue scheduler and more) in one controller-runtime manager.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/cli/kubeconfig"
	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
	"github.com/accelstack/accelstack/pkg/elasticjob"
	"github.com/accelstack/accelstack/pkg/eventlistener"
	"github.com/accelstack/accelstack/pkg/explorer"
	"github.com/accelstack/accelstack/pkg/manager"
	"github.com/accelstack/accelstack/pkg/satoken"
	"github.com/accelstack/accelstack/pkg/serving/mlservice"
	"github.com/accelstack/accelstack/pkg/shim"
	"github.com/accelstack/accelstack/pkg/tensorboard"
	"github.com/accelstack/accelstack/pkg/workflow"
)

func main() {
	fs := cli.NewFlagSet("controllers", "the accelstack controllers (StorageShim, DataCube, jobs, scheduling)")
	kubeconfigPath := fs.String("kubeconfig", "", "Path to a kubeconfig; empty means in-cluster or $KUBECONFIG.")
	var opts manager.Options
	opts.Gateway = &rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "accelstack-system", Name: "gateway"}
	fs.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8080", `Address of the /metrics endpoint; "0" disables it.`)
	fs.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":8081", `Address of /healthz and /readyz; "0" disables them.`)
	fs.BoolVar(&opts.LeaderElect, "leader-elect", false, "Elect one active replica through a Lease.")
	fs.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", "", "Namespace of the election Lease; empty means the pod's namespace.")
	fs.IntVar(&opts.WebhookPort, "webhook-port", 9443, "Port of the webhook server (CRD conversion, job validation).")
	fs.StringVar(&opts.WebhookCertDir, "webhook-cert-dir", filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs"), "Directory with the webhook's tls.crt and tls.key.")
	fs.BoolVar(&opts.WebhookSelfSigned, "webhook-self-signed", true, "Issue the webhook certificate at start and inject its CA into the CRDs and webhook configurations; false expects certificates in --webhook-cert-dir.")
	fs.StringVar(&opts.WebhookServiceDNS, "webhook-service", "controllers-webhook.accelstack-system.svc", "DNS name of the webhook Service, for the self-signed certificate.")
	fs.StringVar(&opts.S3DriverName, "s3-csi-driver", s3volume.DefaultDriverName, "CSI driver name of StorageShim S3 volumes.")
	fs.Func("cephfs-csi-drivers", "Comma-separated CSI drivers CephFS StorageShims may use (default "+shim.DefaultCephFSDriver+").", func(v string) error {
		opts.CephFSDrivers = splitList(v)
		return nil
	})
	fs.Func("cephfs-configmap-namespaces", "Comma-separated namespaces, besides a StorageShim's own, that its CephFS cluster ConfigMap may be in.", func(v string) error {
		opts.CephFSConfigMapNamespaces = splitList(v)
		return nil
	})
	fs.StringVar(&opts.WorkflowToolsImage, "workflow-tools-image", workflow.DefaultToolsImage, "Image of the step sequencer of SeqPod workflow runs.")
	fs.StringVar(&opts.EventsImage, "workflow-events-image", eventlistener.DefaultImage, "Image of the EventListener and WorkflowTrigger servers.")
	fs.StringVar(&opts.EventListenerHost, "event-listener-host", "", "External host an ingress serves EventListeners at (https://<host>/t9k/workflow/triggers/<namespace>/<name>); empty leaves status.address.url empty.")
	fs.StringVar(&opts.GatewayHost, "gateway-host", "", "The gateway's host: the status URLs of Notebooks, TensorBoards, Explorers and EventListeners are https://<host>/<path> when set, in-cluster otherwise.")
	fs.StringVar(&opts.ServingDomain, "serving-domain", "", "The gateway's domain of serving hosts (its --serving-domain): the status URLs of MLServices on the raw backend are https://<service>.<namespace>.<domain> when set, in-cluster otherwise.")
	fs.Func("gateway-service-account", "The gateway's ServiceAccount, <namespace>/<name>, bound to the gateway's rights (reading workloads' access Secrets and Services) in each Project namespace; empty binds none (default accelstack-system/gateway).", func(v string) error {
		opts.Gateway = nil
		if v == "" {
			return nil
		}
		ns, name, ok := strings.Cut(v, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("want <namespace>/<name>, got %q", v)
		}
		opts.Gateway = &rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
		return nil
	})
	fs.StringVar(&opts.ActivityImage, "activity-image", activity.DefaultImage, "Image of the activity sidecar of Notebooks, TensorBoards and Explorers.")
	fs.StringVar(&opts.ElasticJobMasterImage, "elasticjob-master-image", elasticjob.DefaultMasterImage, "Image of the masters of ElasticJobs whose master template names none.")
	fs.StringVar(&opts.TensorBoardImage, "tensorboard-image", tensorboard.DefaultImage, "Image of TensorBoards that name none.")
	fs.StringVar(&opts.FileBrowserImage, "file-browser-image", explorer.DefaultFileBrowserImage, "Image of the Explorers' file browser.")
	fs.StringVar(&opts.CodeServerImage, "code-server-image", explorer.DefaultCodeServerImage, "Image of the Explorers' code-server.")
	fs.DurationVar(&opts.ResourceKeeper.ProbePeriod, "resource-keeper-probe-period", time.Minute, "How often the Resource Keeper probes the activity of Notebooks, TensorBoards and Explorers.")
	fs.DurationVar(&opts.ResourceKeeper.Defaults.IdleAfter, "resource-keeper-idle-after", time.Hour, "Default time without activity after which a workload is Idle; a namespace's tensorstack.dev/idle-after annotation overrides it.")
	fs.DurationVar(&opts.ResourceKeeper.Defaults.SuspendAfter, "resource-keeper-suspend-after", 24*time.Hour, "Default time in Idle after which a workload is suspended; a namespace's tensorstack.dev/suspend-after annotation overrides it.")
	fs.Float64Var(&opts.ResourceKeeper.Defaults.GPUUtilizationThreshold, "resource-keeper-gpu-utilization-threshold", 5, "Default GPU utilization, in percent, above which a workload's GPU counts as activity.")
	fs.StringVar(&opts.ResourceKeeper.NodeAgentNamespace, "node-agent-namespace", "accelstack-system", "Namespace of the node agent's pods, whose GPU metrics the Resource Keeper reads.")
	fs.StringVar(&opts.ServingRouterImage, "serving-router-image", mlservice.DefaultRouterImage, "Image of the MLServices' router.")
	fs.StringVar(&opts.MLServiceBackend, "mlservice-backend", mlservice.BackendAuto, "What runs MLServices: auto (knative when the serving.knative.dev Service CRD is installed at start, raw otherwise), raw or knative.")
	fs.Check(func() error {
		return cli.Hosts(map[string]string{"event-listener-host": opts.EventListenerHost, "gateway-host": opts.GatewayHost, "serving-domain": opts.ServingDomain})
	})
	fs.Check(func() error {
		return cli.OneOf("mlservice-backend", opts.MLServiceBackend, mlservice.BackendAuto, mlservice.BackendRaw, mlservice.BackendKnative)
	})
	fs.StringVar(&opts.DataCubeExecutorImage, "datacube-executor-image", executorenv.DefaultImage, "Image of the DataCube transfer executor.")
	fs.StringVar(&opts.KubeconfigServer, "kubeconfig-server", "", "API server URL that ServiceAccountToken kubeconfigs point at; empty means the address the controllers use.")
	fs.DurationVar(&opts.TokenMaxDuration, "serviceaccounttoken-max-duration", satoken.DefaultMaxDuration, "Longest spec.duration a ServiceAccountToken may ask for; a duration of 0 means this.")
	kubeconfigCA := fs.String("kubeconfig-ca-file", "", "PEM file of the CA of --kubeconfig-server; empty means the CA the controllers trust.")

	cli.Main(fs, func(ctx context.Context) error {
		cfg, err := kubeconfig.RESTConfig(*kubeconfigPath)
		if err != nil {
			return err
		}
		if *kubeconfigCA != "" {
			if opts.KubeconfigCAData, err = os.ReadFile(*kubeconfigCA); err != nil {
				return fmt.Errorf("reading --kubeconfig-ca-file: %w", err)
			}
		}
		ctrl.SetLogger(klog.NewKlogr())
		return manager.Run(ctx, cfg, opts)
	})
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
