package project

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/cacheselector"
)

// Options configures the controller.
type Options struct {
	// PolicyNamespaces are the namespaces whose pods the default
	// NetworkPolicy admits besides the project's; nil means
	// DefaultPolicyNamespaces.
	PolicyNamespaces []string
	// ValidationNamespace is where the webhook dry-runs the NetworkPolicy
	// and ResourceQuota of a Project to validate them; empty means
	// "default".
	ValidationNamespace string
	// Controllers is the subject bound to ControllersClusterRole in each
	// project namespace; nil means whoever the manager's credentials
	// authenticate as (Self).
	Controllers *rbacv1.Subject
	// Gateway is the subject bound to GatewayClusterRole in each project
	// namespace; nil binds none.
	Gateway *rbacv1.Subject
}

// selfTimeout bounds asking the API server who the controllers are, at
// start.
const selfTimeout = 30 * time.Second

// quotaProfileIndex indexes Projects by spec.quotaProfile.
const quotaProfileIndex = "spec.quotaProfile"

// Setup runs the Project controller and its webhook on mgr. The controller
// reads Projects, QuotaProfiles and the objects it marks with
// ProjectLabelKey (namespaces, quotas, policies, ServiceAccounts,
// RoleBindings) through a cache of its own. It also creates the QuotaProfile
// DefaultQuotaProfileName when none of that name exists.
func Setup(mgr ctrl.Manager, opts Options) error {
	c, err := cacheselector.NewCache(mgr, "project", ProjectLabelKey, cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&tensorstackv1beta1.Project{}:      {Label: labels.Everything()},
			&tensorstackv1beta1.QuotaProfile{}: {Label: labels.Everything()},
		},
	})
	if err != nil {
		return err
	}
	if err := c.IndexField(context.Background(), &tensorstackv1beta1.Project{}, quotaProfileIndex, func(o client.Object) []string {
		if p := o.(*tensorstackv1beta1.Project).Spec.QuotaProfile; p != "" {
			return []string{p}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing Projects by QuotaProfile: %w", err)
	}
	cl, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), Cache: &client.CacheOptions{Reader: c}})
	if err != nil {
		return fmt.Errorf("creating the project client: %w", err)
	}
	r := NewReconciler(cl, mgr.GetAPIReader(), mgr.GetEventRecorder("project-controller"), opts.PolicyNamespaces)
	r.controllers, r.gateway = opts.Controllers, opts.Gateway
	if r.controllers == nil {
		ctx, cancel := context.WithTimeout(context.Background(), selfTimeout)
		self, err := Self(ctx, cl)
		cancel()
		if err != nil {
			return err
		}
		r.controllers = &self
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("project").
		WatchesRawSource(source.Kind(c, client.Object(&tensorstackv1beta1.Project{}), &handler.EnqueueRequestForObject{}))
	owner := handler.TypedEnqueueRequestForOwner[client.Object](mgr.GetScheme(), mgr.GetRESTMapper(), &tensorstackv1beta1.Project{}, handler.OnlyControllerOwner())
	for _, o := range []client.Object{&corev1.ResourceQuota{}, &networkingv1.NetworkPolicy{}, &corev1.ServiceAccount{}, &rbacv1.RoleBinding{}} {
		b = b.WatchesRawSource(source.Kind(c, o, owner))
	}
	b = b.WatchesRawSource(source.Kind(c, client.Object(&corev1.Namespace{}), handler.EnqueueRequestsFromMapFunc(namespaceProject)))
	b = b.WatchesRawSource(source.Kind(c, client.Object(&tensorstackv1beta1.QuotaProfile{}), handler.EnqueueRequestsFromMapFunc(
		func(ctx context.Context, o client.Object) []reconcile.Request {
			var list tensorstackv1beta1.ProjectList
			if err := c.List(ctx, &list, client.MatchingFields{quotaProfileIndex: o.GetName()}); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Listing the Projects of a QuotaProfile", "quotaProfile", o.GetName())
				return nil
			}
			reqs := make([]reconcile.Request, 0, len(list.Items))
			for _, p := range list.Items {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: p.Name}})
			}
			return reqs
		})))
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("setting up the Project controller: %w", err)
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		// Until it is created: an API server not ready yet is no reason to
		// stop the controllers.
		// The controllers stopping first is no error either.
		_ = wait.PollUntilContextCancel(ctx, defaultProfileRetry, true, func(ctx context.Context) (bool, error) {
			if err := ensureDefaultProfile(ctx, cl); err != nil {
				mgr.GetLogger().Error(err, "Creating the default QuotaProfile; retrying")
				return false, nil
			}
			return true, nil
		})
		return nil
	})); err != nil {
		return fmt.Errorf("adding the default QuotaProfile: %w", err)
	}
	ns := opts.ValidationNamespace
	if ns == "" {
		ns = metav1NamespaceDefault
	}
	mgr.GetWebhookServer().Register(WebhookPath, &admission.Webhook{Handler: &webhook{
		decoder: admission.NewDecoder(mgr.GetScheme()), reader: mgr.GetAPIReader(), writer: mgr.GetClient(), validationNamespace: ns,
	}})
	return nil
}

// metav1NamespaceDefault is the namespace every cluster has.
const metav1NamespaceDefault = "default"

// namespaceProject maps a marked namespace to the Project it names.
func namespaceProject(_ context.Context, o client.Object) []reconcile.Request {
	if name := o.GetLabels()[ProjectLabelKey]; name != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
	}
	return nil
}
