package satoken

import (
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/cacheselector"
)

// Options configures the controller.
type Options struct {
	// Cluster is what kubeconfigs point at; an empty Server means the
	// manager's own API server address and CA.
	Cluster Cluster
	// Clock tells the time; nil means the real clock.
	Clock clock.PassiveClock
	// MaxDuration bounds spec.duration, and is what a duration of 0
	// means; 0 means DefaultMaxDuration.
	MaxDuration time.Duration
}

// Setup runs the ServiceAccountToken controller on mgr. It watches the
// ServiceAccounts and RoleBindings it creates through a cache of its own,
// of the objects labelled with NameLabelKey; Secrets it reads by name and
// never watches.
func Setup(mgr ctrl.Manager, opts Options) error {
	cluster := opts.Cluster
	if cluster.Server == "" {
		cfg := mgr.GetConfig()
		cluster = Cluster{Server: cfg.Host, CAData: cfg.CAData}
		if len(cluster.CAData) == 0 && cfg.CAFile != "" {
			ca, err := os.ReadFile(cfg.CAFile)
			if err != nil {
				return fmt.Errorf("reading the API server's CA: %w", err)
			}
			cluster.CAData = ca
		}
	}
	c, err := cacheselector.NewCache(mgr, "ServiceAccountToken", NameLabelKey, cache.Options{})
	if err != nil {
		return err
	}
	r := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorder("serviceaccounttoken-controller"), opts.Clock, cluster)
	r.maxDuration = opts.MaxDuration
	b := ctrl.NewControllerManagedBy(mgr).
		Named("serviceaccounttoken").
		For(&tensorstackv1beta1.ServiceAccountToken{})
	owner := handler.TypedEnqueueRequestForOwner[client.Object](mgr.GetScheme(), mgr.GetRESTMapper(), &tensorstackv1beta1.ServiceAccountToken{}, handler.OnlyControllerOwner())
	for _, o := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.RoleBinding{}} {
		b = b.WatchesRawSource(source.Kind(c, o, owner))
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("setting up the ServiceAccountToken controller: %w", err)
	}
	return nil
}
