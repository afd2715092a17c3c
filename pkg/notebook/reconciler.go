package notebook

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
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// Event reasons.
const (
	// EventCreated: the controller created a StatefulSet or Service.
	EventCreated = interactive.EventCreated
	// EventDeleted: the controller deleted the SSH Service.
	EventDeleted = "Deleted"
	// EventFailed: the controller could not write one.
	EventFailed = interactive.EventFailed
	// EventInvalidSpec: the spec cannot run.
	EventInvalidSpec = "InvalidSpec"
	// EventSSHKeys: a Secret of spec.ssh.authorized_keys is missing or
	// unfit.
	EventSSHKeys = "SSHKeysInvalid"
)

// secretRetry is when a Notebook with a missing or unfit SSH Secret is
// looked at again: Secrets are not watched.
const secretRetry = 30 * time.Second

// Reconciler keeps the StatefulSet and Services of each Notebook, and its
// status.
type Reconciler struct {
	client   client.Client
	writer   interactive.Writer
	recorder events.EventRecorder
	image    string
	// gatewayHost is Options.GatewayHost.
	gatewayHost string
}

// NewReconciler returns a reconciler that reads Notebooks and Secrets and
// writes through c (Secrets must not be cached: c reads them from the API
// server), reads StatefulSets, Services and pods through reader (or
// apiReader, when a name is taken), records events with recorder and runs
// the sidecar image.
func NewReconciler(c client.Client, reader, apiReader client.Reader, recorder events.EventRecorder, image string) *Reconciler {
	if image == "" {
		image = activity.DefaultImage
	}
	return &Reconciler{
		client:   c,
		writer:   interactive.Writer{Client: c, Reader: reader, APIReader: apiReader, Scheme: c.Scheme()},
		recorder: recorder,
		image:    image,
	}
}

// +kubebuilder:rbac:groups=tensorstack.dev,resources=notebooks,verbs=get;list;watch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=notebooks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// Reconcile makes the Notebook's StatefulSet and Services, then writes its
// status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return interactive.Reconcile(ctx, r.client, req, &tensorstackv1beta1.Notebook{},
		func(nb *tensorstackv1beta1.Notebook) any { return &nb.Status }, r.sync)
}

// sync writes the objects of nb and sets its status; a failure but a
// stale cache is reported in the Ready condition too.
func (r *Reconciler) sync(ctx context.Context, nb *tensorstackv1beta1.Notebook) (ctrl.Result, error) {
	nb.Status.URL = URL(r.gatewayHost, nb)
	var result ctrl.Result
	err := r.reconcile(ctx, nb, ObjectName(nb.UID), &result)
	if err != nil && !errors.Is(err, interactive.ErrStale) {
		ctrl.LoggerFrom(ctx).Error(err, "Reconciling Notebook failed")
		if c := interactive.FindCondition(nb.Status.Conditions, tensorstackv1beta1.ConditionReady); c == nil || c.Message != err.Error() {
			r.recorder.Eventf(nb, nil, corev1.EventTypeWarning, EventFailed, "Reconcile", "%v", err)
		}
		setCondition(nb, tensorstackv1beta1.ConditionReady, condition{corev1.ConditionFalse, ReasonReconcileFailed, err.Error()})
	}
	return result, err
}

// setCondition sets the condition typ of nb to c (interactive.SetCondition).
func setCondition(nb *tensorstackv1beta1.Notebook, typ string, c condition) {
	interactive.SetCondition(&nb.Status.Conditions, c.of(typ), metav1.Now())
}

// reconcile writes the objects of nb, named name, and sets its status but
// for a failure, which it returns.
func (r *Reconciler) reconcile(ctx context.Context, nb *tensorstackv1beta1.Notebook, name string, result *ctrl.Result) error {
	if errs := ValidateSpec(nb); len(errs) > 0 {
		msg := errs.ToAggregate().Error()
		if c := interactive.FindCondition(nb.Status.Conditions, tensorstackv1beta1.ConditionReady); c == nil || c.Reason != ReasonInvalidSpec || c.Message != msg {
			r.recorder.Eventf(nb, nil, corev1.EventTypeWarning, EventInvalidSpec, "Validate", "%s", msg)
		}
		nb.Status.Phase = tensorstackv1beta1.NotebookFailed
		setCondition(nb, tensorstackv1beta1.ConditionReady, condition{corev1.ConditionFalse, ReasonInvalidSpec, msg})
		return nil
	}
	sshEnabled := nb.Spec.SSH != nil && nb.Spec.SSH.Enabled
	keys, err := checkKeySecrets(ctx, r.client, nb)
	if err != nil {
		return err
	}
	if sshEnabled {
		kc := keysCondition(keys)
		if kc.status == corev1.ConditionFalse {
			if c := interactive.FindCondition(nb.Status.Conditions, ConditionSSHReady); c == nil || c.Message != kc.message {
				r.recorder.Eventf(nb, nil, corev1.EventTypeWarning, EventSSHKeys, "CheckSecrets", "%s", kc.message)
			}
			// Secrets are not watched: look again for a fix.
			result.RequeueAfter = secretRetry
		}
		setCondition(nb, ConditionSSHReady, kc)
	} else {
		interactive.RemoveCondition(&nb.Status.Conditions, ConditionSSHReady)
	}

	sts, err := r.ensure(ctx, nb, name, keys.valid)
	if err != nil {
		return err
	}
	pod, err := r.pod(ctx, sts)
	if err != nil {
		return err
	}
	o := observe(nb.Spec.Suspended(), nb.Spec.MainContainer(), PodName(name), pod)
	nb.Status.Phase, nb.Status.Pod = o.phase, o.pod
	setCondition(nb, tensorstackv1beta1.ConditionReady, o.ready)
	return nil
}

// ensure makes the access Secret, the NetworkPolicy, the StatefulSet and
// the Services of nb and sets the SSH status; it returns the StatefulSet.
func (r *Reconciler) ensure(ctx context.Context, nb *tensorstackv1beta1.Notebook, name string, keys []string) (*appsv1.StatefulSet, error) {
	log := ctrl.LoggerFrom(ctx)
	created := func(kind string, obj client.Object) {
		log.V(3).Info("Created", "kind", kind, "name", obj.GetName())
		r.recorder.Eventf(nb, obj, corev1.EventTypeNormal, EventCreated, "Create"+kind, "Created %s %s", kind, obj.GetName())
	}
	sshEnabled := nb.Spec.SSH != nil && nb.Spec.SSH.Enabled
	if err := r.writer.EnsureAccess(ctx, r.recorder, nb, nb.Namespace, name, objectLabels(nb, name, "notebook"), map[string]string{NotebookLabelKey: name}, sshEnabled); err != nil {
		return nil, err
	}
	sts, isNew, err := r.writer.EnsureStatefulSet(ctx, nb, statefulSet(nb, name, r.image, keys))
	if err != nil {
		return nil, err
	}
	if isNew {
		created("StatefulSet", sts)
	}
	svc, isNew, err := r.writer.EnsureService(ctx, nb, httpService(nb, name))
	if err != nil {
		return nil, err
	}
	if isNew {
		created("Service", svc)
	}
	if !sshEnabled {
		nb.Status.SSH = nil
		ssh := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: nb.Namespace, Name: SSHServiceName(name)}}
		deleted, err := r.writer.Delete(ctx, nb, ssh)
		if err != nil {
			return nil, err
		}
		if deleted {
			log.V(3).Info("Deleted Service", "name", SSHServiceName(name))
			r.recorder.Eventf(nb, nil, corev1.EventTypeNormal, EventDeleted, "DeleteService", "Deleted Service %s: SSH is disabled", SSHServiceName(name))
		}
		return sts, nil
	}
	ssh, isNew, err := r.writer.EnsureService(ctx, nb, sshService(nb, name))
	if err != nil {
		return nil, err
	}
	if isNew {
		created("Service", ssh)
	}
	nb.Status.SSH = sshStatus(ssh, nb.Status.SSH)
	return sts, nil
}

// pod returns the pod of sts, nil when there is none (or one of its name
// that sts does not control).
func (r *Reconciler) pod(ctx context.Context, sts *appsv1.StatefulSet) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	if err := r.writer.Reader.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: PodName(sts.Name)}, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting pod %s: %w", PodName(sts.Name), err)
	}
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.Kind != "StatefulSet" || ref.Name != sts.Name {
		return nil, nil
	}
	return pod, nil
}
