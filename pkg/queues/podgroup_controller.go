package queues

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
)

// +kubebuilder:rbac:groups=scheduler.tensorstack.dev,resources=podgroups,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduler.tensorstack.dev,resources=podgroups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// podGroupReconciler writes the status of PodGroups from their pods.
type podGroupReconciler struct {
	client  client.Client
	members *members
}

// Reconcile counts the group's pods and writes the status when it changed.
func (r *podGroupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pg := &schedv1beta1.PodGroup{}
	if err := r.client.Get(ctx, req.NamespacedName, pg); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("podGroup", klog.KObj(pg))
	pods, err := r.members.groupPods(ctx, pg.Namespace, pg.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	st := groupStatus(pg, pods, metav1.Now())
	if equality.Semantic.DeepEqual(st, pg.Status) {
		return ctrl.Result{}, nil
	}
	pg = pg.DeepCopy()
	pg.Status = st
	if err := r.client.Status().Update(ctx, pg); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating the status of PodGroup %s: %w", klog.KObj(pg), err)
	}
	log.V(3).Info("Updated PodGroup status", "running", st.Running, "pending", st.Pending)
	return ctrl.Result{}, nil
}

// setup registers the reconciler, watching PodGroups and the pods of pods.
func (r *podGroupReconciler) setup(mgr ctrl.Manager, pods cache.Cache) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("podgroup-status").
		For(&schedv1beta1.PodGroup{}).
		WatchesRawSource(source.Kind(pods, client.Object(&corev1.Pod{}),
			handler.TypedEnqueueRequestsFromMapFunc(podToGroup))).
		Complete(r)
}

// podToGroup maps a pod to its PodGroup.
func podToGroup(_ context.Context, o client.Object) []reconcile.Request {
	g := o.GetLabels()[schedv1beta1.GroupNameLabel]
	if g == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: g}}}
}
