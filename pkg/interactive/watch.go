package interactive

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/accelstack/accelstack/pkg/cacheselector"
)

// NewCache returns a cache of the objects labelled with labelKey (and of
// byObject as configured there), without their managed fields, added to
// mgr: the manager's own cache holds no Deployments, StatefulSets,
// Services or pods of the workloads.
func NewCache(mgr ctrl.Manager, labelKey string, byObject map[client.Object]cache.ByObject) (cache.Cache, error) {
	return cacheselector.NewCache(mgr, labelKey, labelKey, cache.Options{ByObject: byObject})
}

// WatchWorkloads makes b watch, in c, the pod controllers of the kind of
// set (an empty Deployment or StatefulSet), the Services and the
// NetworkPolicies that owner's kind controls, and the pods of those
// controllers, whose label labelKey names their controller. (Access
// Secrets are not watched: the controllers may not list Secrets.)
func WatchWorkloads(b *builder.Builder, mgr ctrl.Manager, c cache.Cache, owner, set client.Object, labelKey string) *builder.Builder {
	for _, o := range []client.Object{set, &corev1.Service{}, &networkingv1.NetworkPolicy{}} {
		b = b.WatchesRawSource(source.Kind(c, o,
			handler.TypedEnqueueRequestForOwner[client.Object](mgr.GetScheme(), mgr.GetRESTMapper(), owner, handler.OnlyControllerOwner())))
	}
	gvk, err := mgr.GetClient().GroupVersionKindFor(owner)
	kind := gvk.Kind
	if err != nil {
		kind = "" // unknown to the scheme: no pod maps to it
	}
	return b.WatchesRawSource(source.Kind(c, client.Object(&corev1.Pod{}), handler.EnqueueRequestsFromMapFunc(podOwner(c, set, labelKey, kind))))
}

// podOwner maps a pod, through the controller of the kind of set its label
// labelKey names, to that controller's controller when that is of kind.
func podOwner(reader client.Reader, set client.Object, labelKey, kind string) handler.MapFunc {
	return func(ctx context.Context, pod client.Object) []reconcile.Request {
		name := pod.GetLabels()[labelKey]
		if name == "" || kind == "" {
			return nil
		}
		ctl, ok := set.DeepCopyObject().(client.Object)
		if !ok {
			return nil
		}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: pod.GetNamespace(), Name: name}, ctl); err != nil {
			return nil
		}
		ref := metav1.GetControllerOf(ctl)
		if ref == nil || ref.Kind != kind {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ctl.GetNamespace(), Name: ref.Name}}}
	}
}
