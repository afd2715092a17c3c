package notebook

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// Options configures the controller.
type Options struct {
	// ActivityImage runs the activity sidecar; empty means
	// activity.DefaultImage.
	ActivityImage string
	// GatewayHost is the gateway's host: status URLs are on it when set,
	// in-cluster otherwise.
	GatewayHost string
}

// Setup runs the Notebook controller and its webhook on mgr. The
// controller reads StatefulSets, Services, NetworkPolicies and pods through
// a cache of its own, of the objects labelled with NotebookLabelKey, rather
// than the manager's; the manager's client reads Secrets from the API
// server.
func Setup(mgr ctrl.Manager, opts Options) error {
	c, err := interactive.NewCache(mgr, NotebookLabelKey, nil)
	if err != nil {
		return err
	}
	r := NewReconciler(mgr.GetClient(), c, mgr.GetAPIReader(), mgr.GetEventRecorder("notebook-controller"), opts.ActivityImage)
	r.gatewayHost = opts.GatewayHost
	b := ctrl.NewControllerManagedBy(mgr).Named("notebook").For(&tensorstackv1beta1.Notebook{})
	b = interactive.WatchWorkloads(b, mgr, c, &tensorstackv1beta1.Notebook{}, &appsv1.StatefulSet{}, NotebookLabelKey)
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("setting up the Notebook controller: %w", err)
	}
	mgr.GetWebhookServer().Register(WebhookPath, &admission.Webhook{Handler: &webhook{decoder: admission.NewDecoder(mgr.GetScheme()), secrets: mgr.GetAPIReader()}})
	return nil
}
