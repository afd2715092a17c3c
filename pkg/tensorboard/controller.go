package tensorboard

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/tensorboard/logdir"
)

// Reasons of the Ready condition and of events, besides interactive's.
const (
	// ReasonInvalidSpec: a location of logs is not one (the webhook was
	// bypassed); nothing runs.
	ReasonInvalidSpec = interactive.ReasonInvalidSpec
	// ReasonSecretNotFound: the S3 Secret does not exist; the controller
	// looks again every SecretRetry.
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonSecretInvalid: the S3 Secret holds neither layout.
	ReasonSecretInvalid = "SecretInvalid"
	// ReasonNameConflict: a Deployment, Service, NetworkPolicy or access
	// Secret of the TensorBoard's name belongs to something else.
	ReasonNameConflict = interactive.ReasonNameConflict
	// EventCreated: the controller created the Deployment or Service.
	EventCreated = interactive.EventCreated
	// EventFailed: the controller could not write them.
	EventFailed = interactive.EventFailed
)

// SecretRetry is how often a TensorBoard waiting for its S3 Secret looks
// again: Secrets are not watched.
const SecretRetry = 10 * time.Second

// Reconciler runs each TensorBoard as a Deployment and Service and writes
// its status.
type Reconciler struct {
	client client.Client
	// cache holds the TensorBoards' Deployments, Services and pods.
	cache    client.Reader
	writer   interactive.Writer
	recorder events.EventRecorder
	opts     Options
}

// NewReconciler returns a reconciler that reads TensorBoards (and S3
// Secrets, which the manager's client reads from the API server) and
// writes through c, reads Deployments, Services and pods through cache (or
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

// +kubebuilder:rbac:groups=tensorstack.dev,resources=tensorboards,verbs=get;list;watch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=tensorboards/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// Reconcile makes the TensorBoard's Deployment and Service, then writes its
// phase, pod, URL and Ready condition; the other conditions (Idle, which
// the Resource Keeper writes) stay as they are.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return interactive.Reconcile(ctx, r.client, req, &tensorstackv1beta1.TensorBoard{},
		func(tb *tensorstackv1beta1.TensorBoard) any { return &tb.Status }, r.sync)
}

// sync makes the objects of tb and sets its status.
func (r *Reconciler) sync(ctx context.Context, tb *tensorstackv1beta1.TensorBoard) (ctrl.Result, error) {
	state, result, err := r.reconcileWorkload(ctx, tb)
	if warning(state.Reason) && readyMessage(tb.Status.Conditions) != readyText(state) {
		r.recorder.Eventf(tb, nil, corev1.EventTypeWarning, state.Reason, "Reconcile", "%s", state.Message)
	}
	tb.Status.Phase = tensorstackv1beta1.TensorBoardPhase(state.Phase)
	tb.Status.Pod = state.Pod
	tb.Status.URL = URL(r.opts.GatewayHost, tb.Namespace, tb.Name)
	setReady(&tb.Status.Conditions, state)
	return result, err
}

// reconcileWorkload writes the Deployment and Service tb asks for, unless
// its spec is invalid or its S3 Secret unusable, and returns its state.
func (r *Reconciler) reconcileWorkload(ctx context.Context, tb *tensorstackv1beta1.TensorBoard) (interactive.State, ctrl.Result, error) {
	name := ObjectName(tb.Name)
	p, _ := logdir.Build(&tb.Spec, specPath)
	if errs := Validate(tb); len(errs) > 0 {
		st, err := r.observe(ctx, tb, name, nil, &interactive.State{Phase: interactive.PhaseFailed, Reason: ReasonInvalidSpec, Message: errs.ToAggregate().Error()})
		return st, ctrl.Result{}, err
	}
	layout := s3None
	if p.S3Secret != "" {
		var reason, msg string
		var err error
		if layout, reason, msg, err = r.secretLayout(ctx, tb.Namespace, p.S3Secret); err != nil {
			return interactive.State{}, ctrl.Result{}, err
		}
		if reason != "" {
			st, err := r.observe(ctx, tb, name, nil, &interactive.State{Phase: interactive.PhasePending, Reason: reason, Message: msg})
			return st, ctrl.Result{RequeueAfter: SecretRetry}, err
		}
	}

	w := workload(tb, p, layout, r.opts.Image, r.opts.ActivityImage)
	dep, err := r.writer.Ensure(ctx, r.recorder, tb, w)
	override, retry, err := interactive.EnsureFailed(r.recorder, tb, err)
	st, oerr := r.observe(ctx, tb, name, dep, override)
	return st, ctrl.Result{RequeueAfter: retry}, errors.Join(err, oerr)
}

// observe returns the state of tb from its Deployment (dep, or the
// cache's when nil) and pod; override, when set, replaces the phase and
// its reason, keeping the pod.
func (r *Reconciler) observe(ctx context.Context, tb *tensorstackv1beta1.TensorBoard, name string, dep *appsv1.Deployment, override *interactive.State) (interactive.State, error) {
	st, err := interactive.ObserveDeployment(ctx, r.cache, tb.Namespace, name, map[string]string{LabelKey: name}, dep, tb.Spec.Suspend)
	if err == nil && override != nil && !tb.Spec.Suspend {
		st.Phase, st.Reason, st.Message = override.Phase, override.Reason, override.Message
	}
	return st, err
}

// secretLayout returns the layout of the S3 Secret name, read from the API
// server (keys only; values are never read into the pod's spec), or the
// reason and message why it cannot be used.
func (r *Reconciler) secretLayout(ctx context.Context, namespace, name string) (layout s3Layout, reason, message string, err error) {
	secret := &corev1.Secret{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return s3None, ReasonSecretNotFound, fmt.Sprintf("Secret %s not found in namespace %s", name, namespace), nil
		}
		return s3None, "", "", fmt.Errorf("getting Secret %s: %w", name, err)
	}
	has := func(k string) bool { return len(secret.Data[k]) > 0 }
	switch {
	case has(s3volume.SecretAccessKeyID) && has(s3volume.SecretSecretAccessKey) && has(s3volume.SecretEndpoint):
		return s3Env, "", "", nil
	case has(s3volume.SecretS3cfg):
		return s3Cfg, "", "", nil
	}
	return s3None, ReasonSecretInvalid, fmt.Sprintf("Secret %s holds neither the keys %s, %s and %s (S3-env) nor %s (S3-cfg)",
		name, s3volume.SecretEndpoint, s3volume.SecretAccessKeyID, s3volume.SecretSecretAccessKey, s3volume.SecretS3cfg), nil
}

// warning reports the reasons that are recorded as warning events.
func warning(reason string) bool {
	switch reason {
	case ReasonInvalidSpec, ReasonSecretNotFound, ReasonSecretInvalid, ReasonNameConflict:
		return true
	}
	return false
}

// readyMessage returns the message of the Ready condition of conds.
func readyMessage(conds []tensorstackv1beta1.TensorBoardCondition) string {
	if c := interactive.FindCondition(interactive.FromTensorBoardConditions(conds), tensorstackv1beta1.ConditionReady); c != nil {
		return c.Message
	}
	return ""
}

// readyText is the message of the Ready condition of st: TensorBoard
// conditions have no reason, so the message starts with it.
func readyText(st interactive.State) string {
	if st.Reason == "" {
		return st.Message
	}
	return st.Reason + ": " + st.Message
}

// setReady sets the Ready condition of conds from st (SetCondition).
func setReady(conds *[]tensorstackv1beta1.TensorBoardCondition, st interactive.State) {
	status := corev1.ConditionFalse
	if st.Ready() {
		status = corev1.ConditionTrue
	}
	all := interactive.FromTensorBoardConditions(*conds)
	interactive.SetCondition(&all, tensorstackv1beta1.WorkloadCondition{Type: tensorstackv1beta1.ConditionReady, Status: status, Message: readyText(st)}, metav1.Now())
	*conds = interactive.ToTensorBoardConditions(all)
}
