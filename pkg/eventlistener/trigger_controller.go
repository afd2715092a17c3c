package eventlistener

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// TriggerReconciler keeps the Deployment and Service of each
// WorkflowTrigger, and its Ready condition.
type TriggerReconciler struct {
	client   client.Client
	objects  objectWriter
	recorder events.EventRecorder
	opts     Options
}

// NewTriggerReconciler returns a reconciler that reads listeners and
// triggers and writes through c, reads Deployments and Services through
// reader (or apiReader, when a name is taken), records events with
// recorder and runs opts.Image.
func NewTriggerReconciler(c client.Client, reader, apiReader client.Reader, recorder events.EventRecorder, opts Options) *TriggerReconciler {
	if opts.Image == "" {
		opts.Image = DefaultImage
	}
	return &TriggerReconciler{client: c, objects: objectWriter{client: c, reader: reader, apiReader: apiReader, scheme: c.Scheme()}, recorder: recorder, opts: opts}
}

// Reconcile makes the trigger's Deployment, configured with its sources
// and workflowRunSpec, and Service, then writes its Ready condition. An
// invalid trigger gets none.
func (r *TriggerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	wt := &triggersv1beta1.WorkflowTrigger{}
	if err := r.client.Get(ctx, req.NamespacedName, wt); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if wt.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("workflowTrigger", klog.KObj(wt))
	ctx = ctrl.LoggerInto(ctx, log)
	log.V(2).Info("Reconciling WorkflowTrigger")

	old := wt.Status.DeepCopy()
	err := r.pruneRuns(ctx, wt)
	if errs := ValidateTrigger(wt); len(errs) > 0 {
		log.V(3).Info("Not deploying an invalid WorkflowTrigger", "errors", errs.ToAggregate().Error())
		setReady(&wt.Status.Conditions, ready{corev1.ConditionFalse, ReasonInvalidSpec, errs.ToAggregate().Error()})
	} else {
		dep, derr := r.reconcileObjects(ctx, wt)
		if stale(derr) {
			return ctrl.Result{RequeueAfter: staleRetry}, err
		}
		err = errors.Join(err, derr)
		missing, lerr := r.missingListeners(ctx, wt)
		err = errors.Join(err, lerr)
		switch {
		case err != nil:
			r.recorder.Eventf(wt, nil, corev1.EventTypeWarning, EventFailed, "Reconcile", "%v", err)
			setReady(&wt.Status.Conditions, ready{corev1.ConditionFalse, ReasonDeploymentFailed, err.Error()})
		case len(missing) > 0:
			setReady(&wt.Status.Conditions, ready{corev1.ConditionFalse, ReasonEventListenerNotFound,
				fmt.Sprintf("EventListener %s not found in namespace %s", strings.Join(missing, ", "), wt.Namespace)})
		default:
			setReady(&wt.Status.Conditions, readiness(dep, "WorkflowTrigger"))
		}
	}
	if !equality.Semantic.DeepEqual(old, &wt.Status) {
		if uerr := r.client.Status().Update(ctx, wt); apierrors.IsConflict(uerr) && err == nil {
			return ctrl.Result{RequeueAfter: staleRetry}, nil
		} else if uerr != nil {
			err = errors.Join(err, fmt.Errorf("updating status: %w", uerr))
		}
	}
	return ctrl.Result{}, err
}

// reconcileObjects makes the trigger's Deployment and Service and returns
// the Deployment.
func (r *TriggerReconciler) reconcileObjects(ctx context.Context, wt *triggersv1beta1.WorkflowTrigger) (*appsv1.Deployment, error) {
	config, err := TriggerConfigJSON(wt)
	if err != nil {
		return nil, err
	}
	name := TriggerObjectName(wt.Name, wt.UID)
	s := serverSpec{
		name:               name,
		labels:             objectLabels(name, triggerComponent, serverconfig.WorkflowTriggerLabelKey, wt.Name),
		replicas:           wt.Spec.Replicas,
		resources:          wt.Spec.Resources,
		image:              r.opts.Image,
		command:            "trigger",
		env:                []corev1.EnvVar{{Name: serverconfig.EnvTriggerConfig, Value: config}},
		serviceAccountName: wt.Spec.ServiceAccountName,
		// The pod creates the runs as its service account.
		mountToken: true,
		headless:   true,
	}
	dep, err := r.objects.ensure(ctx, r.recorder, wt, s)
	if err != nil {
		return nil, err
	}
	// Only the trigger's listeners reach its pods: the events' source is
	// the listener's word, which a pod posting straight to the trigger
	// could forge.
	listeners, _, err := r.existingListeners(ctx, wt)
	if err != nil {
		return nil, err
	}
	if err := r.objects.ensureNetworkPolicy(ctx, wt, triggerNetworkPolicy(wt.Namespace, name, s.labels, listeners)); err != nil {
		return nil, err
	}
	return dep, nil
}

// TriggerConfigJSON returns the serverconfig.TriggerConfig of wt as JSON.
func TriggerConfigJSON(wt *triggersv1beta1.WorkflowTrigger) (string, error) {
	b, err := json.Marshal(serverconfig.TriggerConfig{
		Namespace:       wt.Namespace,
		Name:            wt.Name,
		UID:             wt.UID,
		EventSources:    wt.Spec.EventSources,
		WorkflowRunSpec: wt.Spec.WorkflowRunSpec,
		MaxLiveRuns:     ptr.Deref(wt.Spec.MaxLiveRuns, triggersv1beta1.DefaultMaxLiveRuns),
	})
	if err != nil {
		return "", fmt.Errorf("encoding the trigger config: %w", err)
	}
	return string(b), nil
}

// missingListeners returns the listeners the trigger names that do not
// exist.
func (r *TriggerReconciler) missingListeners(ctx context.Context, wt *triggersv1beta1.WorkflowTrigger) ([]string, error) {
	_, missing, err := r.existingListeners(ctx, wt)
	return missing, err
}

// listenerTriggers maps a listener to the triggers of its namespace that
// name it.
func (r *TriggerReconciler) listenerTriggers(ctx context.Context, o client.Object) []reconcile.Request {
	var list triggersv1beta1.WorkflowTriggerList
	if err := r.client.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing WorkflowTriggers failed", "namespace", o.GetNamespace())
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if slices.Contains(listenerNames(&list.Items[i]), o.GetName()) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}
