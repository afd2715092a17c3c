package interactive

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StaleRetry is when a reconcile that met a stale cache, or a status
// write that conflicted, runs again.
const StaleRetry = time.Second

// Reconcile is the reconcile of a workload of any kind around sync: it
// reads the object req names into obj, an empty one of the kind, and does
// nothing when it is gone or being deleted (its children go with it, by
// their owner references). Otherwise it runs sync with a logger naming the
// object, then writes the object's status, which status returns, when sync
// changed it. A sync that returns ErrStale (the cache has not seen what
// it created) is run again after StaleRetry, its status unwritten; so is
// one whose status write conflicts, when sync did not fail (another writer,
// such as the Resource Keeper, wrote meanwhile).
func Reconcile[T client.Object](ctx context.Context, c client.Client, req ctrl.Request, obj T, status func(T) any, sync func(context.Context, T) (ctrl.Result, error)) (ctrl.Result, error) {
	if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if obj.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	kind := "workload"
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		kind = gvk.Kind
	}
	log := ctrl.LoggerFrom(ctx).WithValues(strings.ToLower(kind[:1])+kind[1:], klog.KObj(obj))
	ctx = ctrl.LoggerInto(ctx, log)
	log.V(2).Info("Reconciling")

	old := status(obj.DeepCopyObject().(T))
	result, err := sync(ctx, obj)
	if errors.Is(err, ErrStale) {
		return ctrl.Result{RequeueAfter: StaleRetry}, nil
	}
	if !equality.Semantic.DeepEqual(old, status(obj)) {
		if uerr := c.Status().Update(ctx, obj); apierrors.IsConflict(uerr) && err == nil {
			return ctrl.Result{RequeueAfter: StaleRetry}, nil
		} else if uerr != nil {
			err = errors.Join(err, fmt.Errorf("updating status: %w", uerr))
		}
	}
	return result, err
}

// EnsureFailed sorts out err, an error of Writer.Ensure for the workload
// owner: ErrStale asks for another reconcile after StaleRetry; ErrNotOwned
// becomes a Failed state of reason ReasonNameConflict, which the workload
// reports; any other is recorded on owner as a warning event of reason
// EventFailed and returned.
func EnsureFailed(recorder events.EventRecorder, owner client.Object, err error) (override *State, retry time.Duration, rerr error) {
	switch {
	case err == nil:
		return nil, 0, nil
	case errors.Is(err, ErrStale):
		return nil, StaleRetry, nil
	case errors.Is(err, ErrNotOwned):
		return &State{Phase: PhaseFailed, Reason: ReasonNameConflict, Message: err.Error()}, 0, nil
	}
	recorder.Eventf(owner, nil, corev1.EventTypeWarning, EventFailed, "Reconcile", "%v", err)
	return nil, 0, err
}
