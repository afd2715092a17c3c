package queues

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// +kubebuilder:rbac:groups=scheduler.tensorstack.dev,resources=queues,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduler.tensorstack.dev,resources=queues/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=delete

// queueReconciler writes the status of Queues and deletes the pods that
// outlive their queue's maxDuration.
type queueReconciler struct {
	client   client.Client
	members  *members
	recorder events.EventRecorder
}

// Reconcile deletes the queue's expired pods, writes its status when it
// changed, and comes back when the next pod expires.
func (r *queueReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	q := &schedv1beta1.Queue{}
	if err := r.client.Get(ctx, req.NamespacedName, q); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("queue", q.Name)
	ctx = ctrl.LoggerInto(ctx, log)
	pods, groups, err := r.members.queueMembers(ctx, q.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	next, expireErr := r.expire(ctx, q, pods)

	st := queueStatus(q, pods, len(groups), metav1.Now())
	if !equality.Semantic.DeepEqual(st, q.Status) {
		q = q.DeepCopy()
		q.Status = st
		if err := r.client.Status().Update(ctx, q); err != nil {
			return ctrl.Result{}, errors.Join(expireErr, fmt.Errorf("updating the status of Queue %s: %w", q.Name, err))
		}
		log.V(3).Info("Updated Queue status", "podGroups", st.PodGroups.Total, "running", st.Pods.Running)
	}
	if expireErr != nil {
		return ctrl.Result{}, expireErr
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// expire deletes the pods of q older than its maxDuration, recording an
// event on each, and returns how long until the next one expires (0: none).
func (r *queueReconciler) expire(ctx context.Context, q *schedv1beta1.Queue, pods []*corev1.Pod) (time.Duration, error) {
	if q.Spec.MaxDuration == nil {
		return 0, nil
	}
	// An unreadable maxDuration (Ready=False says why) limits nothing, as 0.
	limit, _ := queue.ParseMaxDuration(*q.Spec.MaxDuration)
	if limit == 0 {
		return 0, nil
	}
	now := time.Now()
	victims, next := expired(pods, limit, now)
	var errs []error
	for _, p := range victims {
		uid := p.UID
		err := r.client.Delete(ctx, p, client.Preconditions{UID: &uid})
		if client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting pod %s past the maxDuration of queue %s: %w", klog.KObj(p), q.Name, err))
			continue
		}
		if err != nil {
			continue // gone already
		}
		age := now.Sub(p.CreationTimestamp.Time).Round(time.Second)
		r.recorder.Eventf(p, q, corev1.EventTypeWarning, EventMaxDuration, "Delete",
			"Deleted: the pod ran %s, past the maxDuration %s of queue %q", age, *q.Spec.MaxDuration, q.Name)
		ctrl.LoggerFrom(ctx).Info("Deleted a pod past the queue's maxDuration", "pod", klog.KObj(p), "age", age, "maxDuration", *q.Spec.MaxDuration)
	}
	return next, errors.Join(errs...)
}

// setup registers the reconciler, watching Queues, PodGroups and the pods
// of pods.
func (r *queueReconciler) setup(mgr ctrl.Manager, pods cache.Cache) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("queue-status").
		For(&schedv1beta1.Queue{}).
		Watches(&schedv1beta1.PodGroup{}, handler.EnqueueRequestsFromMapFunc(groupToQueue)).
		WatchesRawSource(source.Kind(pods, client.Object(&corev1.Pod{}),
			handler.TypedEnqueueRequestsFromMapFunc(r.podToQueue))).
		Complete(r)
}

// groupToQueue maps a PodGroup to its queue.
func groupToQueue(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: queue.GroupQueue(o.(*schedv1beta1.PodGroup))}}}
}

// podToQueue maps a pod to its queue.
func (r *queueReconciler) podToQueue(ctx context.Context, o client.Object) []reconcile.Request {
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return nil
	}
	if q := queue.MembershipOf(pod, r.members.lookup(ctx)).Queue; q != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: q}}}
	}
	return nil
}
