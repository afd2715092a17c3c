package notebook

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/cacheselector"
)

// Options configures the controller.
type Options struct {
	// ActivityImage runs the activity sidecar; empty means
	// activity.DefaultImage.
	ActivityImage string
}

// Setup runs the Notebook controller and its webhook on mgr. The
// controller reads StatefulSets, Services, NetworkPolicies and pods through a cache of its
// own, of the objects labelled with NotebookLabelKey, rather than the
// manager's; the manager's client reads Secrets from the API server.
func Setup(mgr ctrl.Manager, opts Options) error {
	c, err := cacheselector.NewCache(mgr, "notebook", NotebookLabelKey, cache.Options{})
	if err != nil {
		return err
	}
	r := NewReconciler(mgr.GetClient(), c, mgr.GetAPIReader(), mgr.GetEventRecorder("notebook-controller"), opts.ActivityImage)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("notebook").
		For(&tensorstackv1beta1.Notebook{})
	for _, o := range []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}, &networkingv1.NetworkPolicy{}} {
		b = b.WatchesRawSource(source.Kind(c, o,
			handler.TypedEnqueueRequestForOwner[client.Object](mgr.GetScheme(), mgr.GetRESTMapper(), &tensorstackv1beta1.Notebook{}, handler.OnlyControllerOwner())))
	}
	b = b.WatchesRawSource(source.Kind(c, client.Object(&corev1.Pod{}), handler.EnqueueRequestsFromMapFunc(r.podNotebook)))
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("setting up the Notebook controller: %w", err)
	}
	mgr.GetWebhookServer().Register(WebhookPath, &admission.Webhook{Handler: &webhook{decoder: admission.NewDecoder(mgr.GetScheme()), secrets: mgr.GetAPIReader()}})
	return nil
}
