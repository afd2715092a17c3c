package simple

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/cacheselector"
	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
)

// Options configures the controller.
type Options struct {
	// StorageInitializerImage runs the storage initializer (the DataCube
	// executor's image); empty means executorenv.DefaultImage.
	StorageInitializerImage string
}

// Setup runs the SimpleMLService controller on mgr. It reads Deployments,
// Services and pods through a cache of its own, of the objects labelled
// with LabelKey.
func Setup(mgr ctrl.Manager, opts Options) error {
	c, err := cacheselector.NewCache(mgr, "SimpleMLService", LabelKey, cache.Options{})
	if err != nil {
		return err
	}
	if opts.StorageInitializerImage == "" {
		opts.StorageInitializerImage = executorenv.DefaultImage
	}
	r := NewReconciler(mgr.GetClient(), c, mgr.GetAPIReader(), mgr.GetEventRecorder("simplemlservice-controller"), opts.StorageInitializerImage)
	b := ctrl.NewControllerManagedBy(mgr).Named("simplemlservice").For(&tensorstackv1beta1.SimpleMLService{})
	for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
		b = b.WatchesRawSource(source.Kind(c, o,
			handler.TypedEnqueueRequestForOwner[client.Object](mgr.GetScheme(), mgr.GetRESTMapper(), &tensorstackv1beta1.SimpleMLService{}, handler.OnlyControllerOwner())))
	}
	b = b.WatchesRawSource(source.Kind(c, client.Object(&corev1.Pod{}), handler.EnqueueRequestsFromMapFunc(podService)))
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("setting up the SimpleMLService controller: %w", err)
	}
	return nil
}

// podService maps a pod to its SimpleMLService.
func podService(_ context.Context, pod client.Object) []reconcile.Request {
	name := pod.GetLabels()[LabelKey]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: pod.GetNamespace(), Name: name}}}
}
