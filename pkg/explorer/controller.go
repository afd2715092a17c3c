package explorer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// Reasons of the Ready condition and of events, besides interactive's.
const (
	// ReasonPVCNotFound: the PVC does not exist; the Explorer starts when
	// it appears.
	ReasonPVCNotFound = "PVCNotFound"
	// ReasonInvalidSpec: the spec is invalid (the webhook was bypassed);
	// nothing runs.
	ReasonInvalidSpec = interactive.ReasonInvalidSpec
	// ReasonNameConflict: a Deployment, Service, NetworkPolicy or access
	// Secret of the Explorer's names belongs to something else.
	ReasonNameConflict = interactive.ReasonNameConflict
	// EventCreated: the controller created a Deployment or Service.
	EventCreated = interactive.EventCreated
	// EventFailed: the controller could not write one.
	EventFailed = interactive.EventFailed
)

// Reconciler runs the file browser and code-server of each Explorer and
// writes its status.
type Reconciler struct {
	client client.Client
	// cache holds the Explorers' Deployments, Services and pods, and the
	// cluster's PVCs.
	cache    client.Reader
	writer   interactive.Writer
	recorder events.EventRecorder
	opts     Options
}

// NewReconciler returns a reconciler that reads Explorers and writes
// through c, reads Deployments, Services, pods and PVCs through cache (or
// apiReader when a name is taken), and records events with recorder.
func NewReconciler(c client.Client, cache, apiReader client.Reader, recorder events.EventRecorder, opts Options) *Reconciler {
	return &Reconciler{
		client:   c,
		cache:    cache,
		writer:   interactive.Writer{Client: c, Reader: cache, APIReader: apiReader, Scheme: c.Scheme()},
		recorder: recorder,
		opts:     opts.withDefaults(),
	}
}

// +kubebuilder:rbac:groups=tensorstack.dev,resources=explorers,verbs=get;list;watch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=explorers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch

// Reconcile makes the Deployment and Service of each sub-workload once the
// PVC exists, then writes their states and the Ready condition; the other
// conditions (Idle, which the Resource Keeper writes) stay as they are.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return interactive.Reconcile(ctx, r.client, req, &tensorstackv1beta1.Explorer{},
		func(ex *tensorstackv1beta1.Explorer) any { return &ex.Status }, r.sync)
}

// sync makes the objects of ex and sets its status.
func (r *Reconciler) sync(ctx context.Context, ex *tensorstackv1beta1.Explorer) (ctrl.Result, error) {
	ready, states, result, err := r.reconcileWorkloads(ctx, ex)
	if warning(ready.Reason) {
		if prev := interactive.FindCondition(ex.Status.Conditions, tensorstackv1beta1.ConditionReady); prev == nil || prev.Reason != ready.Reason || prev.Message != ready.Message {
			r.recorder.Eventf(ex, nil, corev1.EventTypeWarning, ready.Reason, "Reconcile", "%s", ready.Message)
		}
	}
	for _, c := range Components {
		st := &tensorstackv1beta1.ResourceStatus{
			Phase: tensorstackv1beta1.ResourcePhase(states[c].Phase),
			Pod:   states[c].Pod,
			URL:   URL(r.opts.GatewayHost, ex.Namespace, ex.Name, c),
		}
		if c == FileBrowser {
			ex.Status.FileBrowser = st
		} else {
			ex.Status.CodeServer = st
		}
	}
	ready.Type = tensorstackv1beta1.ConditionReady
	interactive.SetCondition(&ex.Status.Conditions, ready, metav1.Now())
	return result, err
}

// reconcileWorkloads writes the Deployments and Services of ex, unless
// its spec is invalid or its PVC missing, and returns its Ready condition
// and the state of each sub-workload.
func (r *Reconciler) reconcileWorkloads(ctx context.Context, ex *tensorstackv1beta1.Explorer) (tensorstackv1beta1.WorkloadCondition, map[Component]interactive.State, ctrl.Result, error) {
	var override *interactive.State
	var pvc *corev1.PersistentVolumeClaim
	if errs := Validate(ex); len(errs) > 0 {
		override = &interactive.State{Phase: interactive.PhaseFailed, Reason: ReasonInvalidSpec, Message: errs.ToAggregate().Error()}
	} else {
		pvc = &corev1.PersistentVolumeClaim{}
		if err := r.cache.Get(ctx, client.ObjectKey{Namespace: ex.Namespace, Name: ex.Spec.StorageName}, pvc); apierrors.IsNotFound(err) {
			pvc = nil
			override = &interactive.State{Phase: interactive.PhasePending, Reason: ReasonPVCNotFound,
				Message: fmt.Sprintf("PVC %s not found in namespace %s", ex.Spec.StorageName, ex.Namespace)}
		} else if err != nil {
			return readyUnknown(err), nil, ctrl.Result{}, fmt.Errorf("getting PVC %s: %w", ex.Spec.StorageName, err)
		}
	}

	states := map[Component]interactive.State{}
	var result ctrl.Result
	var errs []error
	for _, c := range Components {
		var dep *appsv1.Deployment
		o := override
		if pvc != nil {
			var err error
			dep, err = r.writer.Ensure(ctx, r.recorder, ex, workload(ex, pvc, c, r.opts))
			conflict, retry, err := interactive.EnsureFailed(r.recorder, ex, err)
			if conflict != nil {
				o = conflict
			}
			if retry > 0 {
				result.RequeueAfter = retry
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		name := ObjectName(ex.Name, c)
		st, err := interactive.ObserveDeployment(ctx, r.cache, ex.Namespace, name, map[string]string{LabelKey: name}, dep, ex.Spec.Suspend)
		if err != nil {
			errs = append(errs, err)
		}
		if o != nil && !ex.Spec.Suspend {
			st.Phase, st.Reason, st.Message = o.Phase, o.Reason, o.Message
		}
		states[c] = st
	}
	if len(errs) > 0 {
		return readyUnknown(errors.Join(errs...)), states, ctrl.Result{}, errors.Join(errs...)
	}
	return readiness(ex, states), states, result, nil
}

// readiness is the Ready condition of ex from the states of its
// sub-workloads: True when both run, else False with the reason of the
// first that does not, and each one's message.
func readiness(ex *tensorstackv1beta1.Explorer, states map[Component]interactive.State) tensorstackv1beta1.WorkloadCondition {
	if ex.Spec.Suspend {
		return tensorstackv1beta1.WorkloadCondition{Status: corev1.ConditionFalse, Reason: interactive.ReasonSuspended, Message: "The Explorer is suspended"}
	}
	cond := tensorstackv1beta1.WorkloadCondition{Status: corev1.ConditionTrue, Reason: interactive.ReasonReady, Message: "The file browser and code-server are ready"}
	var msgs []string
	for _, c := range Components {
		st := states[c]
		if st.Ready() {
			continue
		}
		if cond.Status == corev1.ConditionTrue {
			cond.Status, cond.Reason = corev1.ConditionFalse, st.Reason
		}
		if st.Reason == ReasonPVCNotFound || st.Reason == ReasonInvalidSpec {
			// The same for both: said once.
			msgs = []string{st.Message}
			break
		}
		msgs = append(msgs, string(c)+": "+st.Message)
	}
	if len(msgs) > 0 {
		cond.Message = strings.Join(msgs, "; ")
	}
	return cond
}

// readyUnknown is the Ready condition while the controller cannot tell.
func readyUnknown(err error) tensorstackv1beta1.WorkloadCondition {
	return tensorstackv1beta1.WorkloadCondition{Status: corev1.ConditionUnknown, Reason: EventFailed, Message: err.Error()}
}

// warning reports the reasons that are recorded as warning events.
func warning(reason string) bool {
	switch reason {
	case ReasonPVCNotFound, ReasonInvalidSpec, ReasonNameConflict:
		return true
	}
	return false
}
