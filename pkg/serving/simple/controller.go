package simple

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/serving"
)

// +kubebuilder:rbac:groups=tensorstack.dev,resources=simplemlservices,verbs=get;list;watch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=simplemlservices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// Reconciler reconciles SimpleMLServices.
type Reconciler struct {
	client   client.Client
	cache    client.Reader
	recorder events.EventRecorder
	writer   interactive.Writer
	// image runs the storage initializer.
	image string
}

// NewReconciler returns a reconciler writing with c, reading the
// services' Deployments, Services and pods from cache and, when a create
// finds a name taken, from apiReader.
func NewReconciler(c client.Client, cache, apiReader client.Reader, recorder events.EventRecorder, image string) *Reconciler {
	return &Reconciler{
		client: c, cache: cache, recorder: recorder, image: image,
		writer: interactive.Writer{Client: c, Reader: cache, APIReader: apiReader, Scheme: c.Scheme()},
	}
}

// Reconcile makes the Deployment and Service of a SimpleMLService and
// writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s := &tensorstackv1beta1.SimpleMLService{}
	if err := r.client.Get(ctx, req.NamespacedName, s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !s.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("simpleMLService", klog.KObj(s))
	ctx = ctrl.LoggerInto(ctx, log)
	log.V(2).Info("Reconciling SimpleMLService")

	status := s.Status.DeepCopy()
	now := metav1.Now()
	if errs := interactive.ValidateScheduler(s.Spec.Scheduler, field.NewPath("spec", "scheduler")); len(errs) > 0 {
		interactive.SetCondition(&status.Conditions, notReady(serving.ReasonInvalidSpec, errs.ToAggregate().Error()), now)
		return ctrl.Result{}, r.writeStatus(ctx, s, status)
	}
	dep, created, err := r.writer.EnsureDeployment(ctx, s, deployment(s, r.image))
	if result, done, err := r.failed(ctx, s, status, err); done {
		return result, err
	}
	if created {
		r.recorder.Eventf(s, dep, corev1.EventTypeNormal, interactive.EventCreated, "CreateDeployment", "Created Deployment %s", dep.Name)
	}
	svc := service(s)
	_, created, err = r.writer.EnsureService(ctx, s, svc)
	if result, done, err := r.failed(ctx, s, status, err); done {
		return result, err
	}
	if created {
		r.recorder.Eventf(s, svc, corev1.EventTypeNormal, interactive.EventCreated, "CreateService", "Created Service %s", svc.Name)
	}
	if err := r.cache.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("reading Service %s: %w", svc.Name, err)
	}
	pods := &corev1.PodList{}
	if err := r.cache.List(ctx, pods, client.InNamespace(s.Namespace), client.MatchingLabels(labels(s))); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing pods: %w", err)
	}
	status.Address = address(svc)
	interactive.SetCondition(&status.Conditions, serving.ModelDownloaded(s.Spec.Storage, pods.Items), now)
	interactive.SetCondition(&status.Conditions, readyCondition(dep), now)
	return ctrl.Result{}, r.writeStatus(ctx, s, status)
}

// failed handles an error of writing an object: a stale cache is retried
// shortly, a name taken by another object is reported in Ready.
func (r *Reconciler) failed(ctx context.Context, s *tensorstackv1beta1.SimpleMLService, status *tensorstackv1beta1.SimpleMLServiceStatus, err error) (ctrl.Result, bool, error) {
	switch {
	case err == nil:
		return ctrl.Result{}, false, nil
	case errors.Is(err, interactive.ErrStale):
		return ctrl.Result{RequeueAfter: time.Second}, true, nil
	case errors.Is(err, interactive.ErrNotOwned):
		interactive.SetCondition(&status.Conditions, notReady("NameTaken", err.Error()), metav1.Now())
		return ctrl.Result{}, true, r.writeStatus(ctx, s, status)
	}
	return ctrl.Result{}, true, err
}

// readyCondition is the Ready condition of a service whose Deployment is dep.
func readyCondition(dep *appsv1.Deployment) tensorstackv1beta1.WorkloadCondition {
	rep := serving.DeploymentReplicas(dep)
	if !rep.Ready {
		return notReady(rep.Reason, rep.Message)
	}
	return tensorstackv1beta1.WorkloadCondition{
		Type: tensorstackv1beta1.ConditionReady, Status: corev1.ConditionTrue, Reason: rep.Reason, Message: rep.Message,
	}
}

// notReady is a False Ready condition.
func notReady(reason, message string) tensorstackv1beta1.WorkloadCondition {
	return tensorstackv1beta1.WorkloadCondition{
		Type: tensorstackv1beta1.ConditionReady, Status: corev1.ConditionFalse, Reason: reason, Message: message,
	}
}

// writeStatus writes status when it differs from the SimpleMLService's.
func (r *Reconciler) writeStatus(ctx context.Context, s *tensorstackv1beta1.SimpleMLService, status *tensorstackv1beta1.SimpleMLServiceStatus) error {
	if equality.Semantic.DeepEqual(&s.Status, status) {
		return nil
	}
	s = s.DeepCopy()
	s.Status = *status
	if err := r.client.Status().Update(ctx, s); err != nil {
		if apierrors.IsConflict(err) {
			return nil // a newer version is queued
		}
		return fmt.Errorf("writing the status: %w", err)
	}
	return nil
}
