package mlservice

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/cacheselector"
	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// DefaultRouterImage is the image of the MLServices' router.
const DefaultRouterImage = "ghcr.io/accelstack/serving-router:latest"

// The backends Options.Backend may name.
const (
	BackendAuto    = "auto"
	BackendRaw     = "raw"
	BackendKnative = "knative"
)

// Options configures the controller.
type Options struct {
	// Backend is auto (knative when the Knative Service CRD is installed
	// when the controller starts, raw otherwise), raw or knative.
	Backend string
	// RouterImage runs the router; StorageInitializerImage the storage
	// initializer (the DataCube executor's image).
	RouterImage, StorageInitializerImage string
	// ServingDomain is the gateway's domain of serving hosts: on the raw
	// backend, the status URLs are https://<service>.<namespace>.<domain>
	// when set, in-cluster otherwise.
	ServingDomain string
}

// Setup runs the MLService controller on mgr. It reads Deployments,
// Services and HPAs through a cache of its own, of the objects labelled
// with LabelKey.
func Setup(mgr ctrl.Manager, opts Options) error {
	c, err := cacheselector.NewCache(mgr, "MLService", LabelKey, cache.Options{})
	if err != nil {
		return err
	}
	if opts.StorageInitializerImage == "" {
		opts.StorageInitializerImage = executorenv.DefaultImage
	}
	if opts.RouterImage == "" {
		opts.RouterImage = DefaultRouterImage
	}
	w := interactive.Writer{Client: mgr.GetClient(), Reader: c, APIReader: mgr.GetAPIReader(), Scheme: mgr.GetScheme()}
	var backend Backend = &rawBackend{writer: w}
	knative := opts.Backend == BackendKnative || (opts.Backend != BackendRaw && KnativeInstalled(mgr.GetRESTMapper()))
	if knative {
		backend = &knativeBackend{client: mgr.GetClient(), scheme: mgr.GetScheme()}
	}
	mgr.GetLogger().Info("MLService backend chosen", "backend", backend.Name())
	r := &Reconciler{
		client: mgr.GetClient(), writer: w, backend: backend, recorder: mgr.GetEventRecorder("mlservice-controller"),
		storageImage: opts.StorageInitializerImage, routerImage: opts.RouterImage, servingDomain: opts.ServingDomain,
	}
	owner := handler.TypedEnqueueRequestForOwner[client.Object](mgr.GetScheme(), mgr.GetRESTMapper(), &tensorstackv1beta1.MLService{}, handler.OnlyControllerOwner())
	b := ctrl.NewControllerManagedBy(mgr).Named("mlservice").For(&tensorstackv1beta1.MLService{})
	for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &autoscalingv2.HorizontalPodAutoscaler{}} {
		b = b.WatchesRawSource(source.Kind(c, o, owner))
	}
	if knative {
		ksvc := &unstructured.Unstructured{}
		ksvc.SetGroupVersionKind(KnativeServiceGVK)
		b = b.WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(ksvc), owner))
	}
	b = b.Watches(&tensorstackv1beta1.MLServiceRuntime{}, handler.EnqueueRequestsFromMapFunc(r.runtimeServices))
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("setting up the MLService controller: %w", err)
	}
	return nil
}

// runtimeServices maps a runtime to the MLServices of its namespace that
// name it.
func (r *Reconciler) runtimeServices(ctx context.Context, rt client.Object) []reconcile.Request {
	list := &tensorstackv1beta1.MLServiceList{}
	if err := r.client.List(ctx, list, client.InNamespace(rt.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing MLServices")
		return nil
	}
	var out []reconcile.Request
	for _, m := range list.Items {
		for _, rel := range m.Spec.Releases {
			if rel.Predictor.Model != nil && rel.Predictor.Model.Runtime == rt.GetName() {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&m)})
				break
			}
		}
	}
	return out
}
