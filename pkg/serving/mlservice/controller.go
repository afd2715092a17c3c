package mlservice

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/serving"
)

// +kubebuilder:rbac:groups=tensorstack.dev,resources=mlservices,verbs=get;list;watch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=mlservices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=mlserviceruntimes,verbs=get;list;watch

// Reasons of a release's and the MLService's state.
const (
	ReasonRuntimeNotFound = "RuntimeNotFound"
	ReasonRuntimeDisabled = "RuntimeDisabled"
	ReasonPaused          = "Paused"
	ReasonReady           = "Ready"
	ReasonNotReady        = "NotReady"
)

// Reconciler reconciles MLServices.
type Reconciler struct {
	client  client.Client
	writer  interactive.Writer
	backend Backend
	// recorder records why a release cannot run.
	recorder events.EventRecorder
	// storageImage runs the storage initializer, routerImage the router.
	storageImage, routerImage string
	// servingDomain is Options.ServingDomain.
	servingDomain string
}

// Reconcile runs the releases, the transformer and the router of an
// MLService on the backend and writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &tensorstackv1beta1.MLService{}
	if err := r.client.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !m.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("mlService", klog.KObj(m), "backend", r.backend.Name())
	ctx = ctrl.LoggerInto(ctx, log)
	log.V(2).Info("Reconciling MLService")

	status := m.Status.DeepCopy()
	status.Backend = r.backend.Name()
	now := metav1.Now()
	if errs := interactive.ValidateScheduler(m.Spec.Scheduler, field.NewPath("spec", "scheduler")); len(errs) > 0 {
		interactive.SetCondition(&status.Conditions, condition(tensorstackv1beta1.ConditionReady, false, serving.ReasonInvalidSpec, errs.ToAggregate().Error()), now)
		return ctrl.Result{}, r.writeStatus(ctx, m, status)
	}
	paused := m.Spec.RunMode == tensorstackv1beta1.MLServicePause
	states, problems, err := r.ensureComponents(ctx, m, paused)
	if errors.Is(err, interactive.ErrStale) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	routerReady, err := r.ensureRouter(ctx, m, states, paused)
	if errors.Is(err, interactive.ErrStale) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	fillStatus(m, status, states, problems, routerReady, paused, r.backend.Name() == "raw", r.servingDomain, now)
	return ctrl.Result{}, r.writeStatus(ctx, m, status)
}

// ensureComponents runs the releases and the transformer (none while
// paused) and prunes the rest. It returns their states by object name, and
// the problems of releases that cannot run by release name.
func (r *Reconciler) ensureComponents(ctx context.Context, m *tensorstackv1beta1.MLService, paused bool) (map[string]ComponentState, map[string]ComponentState, error) {
	states, problems := map[string]ComponentState{}, map[string]ComponentState{}
	var comps []Component
	for _, rel := range m.Spec.Releases {
		rt, problem, err := r.runtime(ctx, m.Namespace, rel)
		if err != nil {
			return nil, nil, err
		}
		if problem != nil {
			problems[rel.Name] = *problem
			continue
		}
		pod, err := predictorPod(m, rel, rt, r.storageImage)
		if err != nil {
			reason := argsReason(err)
			if reason == "" {
				reason = serving.ReasonInvalidSpec
			}
			problems[rel.Name] = ComponentState{Reason: reason, Message: err.Error()}
			r.warnOnce(m, rel.Name, problems[rel.Name])
			continue
		}
		p := rel.Predictor
		minR := ptr.Deref(p.MinReplicas, 1)
		comps = append(comps, Component{
			Name: predictorName(m, rel.Name), Labels: labels(m, componentPredict, rel.Name), Template: pod,
			MinReplicas: minR, MaxReplicas: max(ptr.Deref(p.MaxReplicas, minR), minR),
		})
	}
	if t := m.Spec.Transformer; t != nil {
		pod, err := transformerPod(m, r.storageImage)
		if err != nil {
			problems[""] = ComponentState{Reason: serving.ReasonInvalidSpec, Message: err.Error()}
		} else {
			minR := ptr.Deref(t.MinReplicas, 1)
			comps = append(comps, Component{
				Name: transformerName(m), Labels: labels(m, componentTransformer, ""), Template: pod,
				MinReplicas: minR, MaxReplicas: max(ptr.Deref(t.MaxReplicas, minR), minR),
			})
		}
	}
	keep := map[string]bool{}
	if !paused {
		for _, c := range comps {
			s, err := r.backend.Ensure(ctx, m, c)
			if err != nil {
				return nil, nil, fmt.Errorf("running %s: %w", c.Name, err)
			}
			states[c.Name], keep[c.Name] = s, true
		}
	}
	if err := r.backend.Prune(ctx, m, keep); err != nil {
		return nil, nil, err
	}
	// The router's Services of releases no longer there, on any backend;
	// on Knative the components' objects are not Deployments.
	routerKeep := map[string]bool{routerName(m): true}
	for _, s := range routerServices(m, r.backend.Name() == "raw") {
		routerKeep[s.Name] = true
	}
	return states, problems, pruneRaw(ctx, r.writer, m, func(o client.Object) bool {
		return o.GetLabels()[ComponentLabelKey] != componentRouter || routerKeep[o.GetName()]
	})
}

// warnOnce records a Warning event on m with the reason and message of
// the release that cannot run, unless its status already says so (the
// event was recorded when the status was written).
func (r *Reconciler) warnOnce(m *tensorstackv1beta1.MLService, release string, s ComponentState) {
	for _, old := range m.Status.Releases {
		if old.Name == release && old.Reason == s.Reason && old.Message == s.Message {
			return
		}
	}
	if r.recorder != nil {
		r.recorder.Eventf(m, nil, corev1.EventTypeWarning, s.Reason, "Reconcile", "%s", s.Message)
	}
}

// runtime returns the enabled runtime of rel, or the problem that it does
// not exist or is disabled; a release without a model has none.
func (r *Reconciler) runtime(ctx context.Context, ns string, rel tensorstackv1beta1.ReleaseSpec) (*tensorstackv1beta1.MLServiceRuntime, *ComponentState, error) {
	if rel.Predictor.Model == nil {
		return nil, nil, nil
	}
	name := rel.Predictor.Model.Runtime
	rt := &tensorstackv1beta1.MLServiceRuntime{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rt)
	switch {
	case apierrors.IsNotFound(err):
		return nil, &ComponentState{Reason: ReasonRuntimeNotFound, Message: fmt.Sprintf("MLServiceRuntime %s does not exist", name)}, nil
	case err != nil:
		return nil, nil, fmt.Errorf("getting MLServiceRuntime %s: %w", name, err)
	case !rt.Spec.IsEnabled():
		return nil, &ComponentState{Reason: ReasonRuntimeDisabled, Message: fmt.Sprintf("MLServiceRuntime %s is disabled", name)}, nil
	}
	return rt, nil, nil
}

// ensureRouter runs the router and its Services and reports whether it is
// ready.
func (r *Reconciler) ensureRouter(ctx context.Context, m *tensorstackv1beta1.MLService, states map[string]ComponentState, paused bool) (bool, error) {
	raw := r.backend.Name() == "raw"
	dep, err := routerDeployment(m, routerConfig(m, states, raw), r.routerImage, paused)
	if err != nil {
		return false, err
	}
	got, _, err := r.writer.EnsureDeployment(ctx, m, dep)
	if err != nil {
		return false, err
	}
	for _, svc := range routerServices(m, raw) {
		if _, _, err := r.writer.EnsureService(ctx, m, svc); err != nil {
			return false, err
		}
	}
	return serving.DeploymentReplicas(got).Ready, nil
}

// condition returns a condition of typ.
func condition(typ string, status bool, reason, message string) tensorstackv1beta1.WorkloadCondition {
	s := corev1.ConditionFalse
	if status {
		s = corev1.ConditionTrue
	}
	return tensorstackv1beta1.WorkloadCondition{Type: typ, Status: s, Reason: reason, Message: message}
}

// writeStatus writes status when it differs from the MLService's.
func (r *Reconciler) writeStatus(ctx context.Context, m *tensorstackv1beta1.MLService, status *tensorstackv1beta1.MLServiceStatus) error {
	if equality.Semantic.DeepEqual(&m.Status, status) {
		return nil
	}
	m = m.DeepCopy()
	m.Status = *status
	if err := r.client.Status().Update(ctx, m); err != nil {
		if apierrors.IsConflict(err) {
			return nil // a newer version is queued
		}
		return fmt.Errorf("writing the status: %w", err)
	}
	return nil
}
