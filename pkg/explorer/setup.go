package explorer

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/cacheselector"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// The default images of the sub-workloads.
const (
	DefaultFileBrowserImage = "filebrowser/filebrowser:v2.30.0"
	DefaultCodeServerImage  = "codercom/code-server:4.23.1"
)

// WebhookPath is where the Explorer webhook is served, as
// deploy/controllers/interactive-webhook.yaml names it.
const WebhookPath = "/validate-tensorstack-dev-v1beta1-explorer"

// storageNameIndex indexes Explorers by spec.storageName.
const storageNameIndex = "spec.storageName"

// Options configures the controller.
type Options struct {
	// FileBrowserImage and CodeServerImage run the two sub-workloads;
	// empty means the defaults.
	FileBrowserImage, CodeServerImage string
	// ActivityImage runs the activity sidecar; empty means
	// activity.DefaultImage.
	ActivityImage string
	// GatewayHost is the gateway's host: status URLs are on it when set,
	// in-cluster otherwise.
	GatewayHost string
}

// withDefaults fills the empty fields of opts.
func (opts Options) withDefaults() Options {
	if opts.FileBrowserImage == "" {
		opts.FileBrowserImage = DefaultFileBrowserImage
	}
	if opts.CodeServerImage == "" {
		opts.CodeServerImage = DefaultCodeServerImage
	}
	if opts.ActivityImage == "" {
		opts.ActivityImage = activity.DefaultImage
	}
	return opts
}

// Setup runs the Explorer controller and its webhook on mgr. The
// controller reads Deployments, Services and pods through a cache of its
// own, of the objects labelled with LabelKey, which also holds the
// cluster's PVCs: an Explorer waiting for its PVC starts when it appears.
// Of each PVC it holds only the name and the access modes
// (cacheselector.MetadataOnly), all the controller reads, so that a
// tenant's PVCs with large annotations cost the controllers little.
func Setup(mgr ctrl.Manager, opts Options) error {
	c, err := interactive.NewCache(mgr, LabelKey, map[client.Object]cache.ByObject{
		&corev1.PersistentVolumeClaim{}: {Label: labels.Everything(), Transform: cacheselector.MetadataOnly()},
	})
	if err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &tensorstackv1beta1.Explorer{}, storageNameIndex, func(o client.Object) []string {
		ex, ok := o.(*tensorstackv1beta1.Explorer)
		if !ok {
			return nil
		}
		return []string{ex.Spec.StorageName}
	}); err != nil {
		return fmt.Errorf("indexing Explorers by PVC: %w", err)
	}
	r := NewReconciler(mgr.GetClient(), c, mgr.GetAPIReader(), mgr.GetEventRecorder("explorer-controller"), opts)
	b := ctrl.NewControllerManagedBy(mgr).Named("explorer").For(&tensorstackv1beta1.Explorer{})
	b = interactive.WatchWorkloads(b, mgr, c, &tensorstackv1beta1.Explorer{}, &appsv1.Deployment{}, LabelKey)
	b = b.WatchesRawSource(source.Kind(c, client.Object(&corev1.PersistentVolumeClaim{}), handler.EnqueueRequestsFromMapFunc(r.pvcExplorers)))
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("setting up the Explorer controller: %w", err)
	}
	mgr.GetWebhookServer().Register(WebhookPath, &admission.Webhook{Handler: &interactive.Validator{
		Decoder:   admission.NewDecoder(mgr.GetScheme()),
		GroupKind: schema.GroupKind{Group: tensorstackv1beta1.GroupVersion.Group, Kind: "Explorer"},
		New:       func() client.Object { return &tensorstackv1beta1.Explorer{} },
		Check:     check,
	}})
	return nil
}

// check validates a created or updated Explorer.
func check(obj, old client.Object) field.ErrorList {
	ex, _ := obj.(*tensorstackv1beta1.Explorer)
	if o, ok := old.(*tensorstackv1beta1.Explorer); ok {
		return ValidateUpdate(ex, o)
	}
	return Validate(ex)
}

// pvcExplorers maps a PVC to the Explorers of its namespace that name it.
func (r *Reconciler) pvcExplorers(ctx context.Context, pvc client.Object) []reconcile.Request {
	var list tensorstackv1beta1.ExplorerList
	if err := r.client.List(ctx, &list, client.InNamespace(pvc.GetNamespace()), client.MatchingFields{storageNameIndex: pvc.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the Explorers of a PVC", "pvc", pvc.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, ex := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&ex)})
	}
	return reqs
}
