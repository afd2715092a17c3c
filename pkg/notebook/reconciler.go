package notebook

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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// Event reasons.
const (
	// EventCreated: the controller created a StatefulSet or Service.
	EventCreated = "Created"
	// EventDeleted: the controller deleted the SSH Service.
	EventDeleted = "Deleted"
	// EventFailed: the controller could not write one.
	EventFailed = "Failed"
	// EventInvalidSpec: the spec cannot run.
	EventInvalidSpec = "InvalidSpec"
	// EventSSHKeys: a Secret of spec.ssh.authorized_keys is missing or
	// unfit.
	EventSSHKeys = "SSHKeysInvalid"
)

// staleRetry is when a reconcile that met a stale cache or a conflicting
// status write runs again.
const staleRetry = time.Second

// secretRetry is when a Notebook with a missing or unfit SSH Secret is
// looked at again: Secrets are not watched.
const secretRetry = 30 * time.Second

// Reconciler keeps the StatefulSet and Services of each Notebook, and its
// status.
type Reconciler struct {
	client   client.Client
	objects  objectWriter
	recorder events.EventRecorder
	image    string
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
		objects:  objectWriter{client: c, reader: reader, apiReader: apiReader, scheme: c.Scheme()},
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
	nb := &tensorstackv1beta1.Notebook{}
	if err := r.client.Get(ctx, req.NamespacedName, nb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if nb.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("notebook", klog.KObj(nb))
	ctx = ctrl.LoggerInto(ctx, log)
	log.V(2).Info("Reconciling Notebook")

	old := nb.Status.DeepCopy()
	name := ObjectName(nb.UID)
	nb.Status.URL = URL(nb)
	var result ctrl.Result
	err := r.reconcile(ctx, nb, name, &result)
	if errors.Is(err, errStale) {
		// The cache has not seen what this controller created.
		return ctrl.Result{RequeueAfter: staleRetry}, nil
	}
	if err != nil {
		log.Error(err, "Reconciling Notebook failed")
		if c := findCondition(nb.Status.Conditions, tensorstackv1beta1.ConditionReady); c == nil || c.Message != err.Error() {
			r.recorder.Eventf(nb, nil, corev1.EventTypeWarning, EventFailed, "Reconcile", "%v", err)
		}
		setCondition(&nb.Status.Conditions, tensorstackv1beta1.ConditionReady, condition{corev1.ConditionFalse, ReasonReconcileFailed, err.Error()})
	}
	if !equality.Semantic.DeepEqual(old, &nb.Status) {
		if uerr := r.client.Status().Update(ctx, nb); apierrors.IsConflict(uerr) && err == nil {
			// The Resource Keeper wrote Idle meanwhile: read it again.
			return ctrl.Result{RequeueAfter: staleRetry}, nil
		} else if uerr != nil {
			err = errors.Join(err, fmt.Errorf("updating status: %w", uerr))
		}
	}
	return result, err
}

// reconcile writes the objects of nb, named name, and sets its status but
// for a failure, which it returns.
func (r *Reconciler) reconcile(ctx context.Context, nb *tensorstackv1beta1.Notebook, name string, result *ctrl.Result) error {
	if errs := ValidateSpec(nb); len(errs) > 0 {
		msg := errs.ToAggregate().Error()
		if c := findCondition(nb.Status.Conditions, tensorstackv1beta1.ConditionReady); c == nil || c.Reason != ReasonInvalidSpec || c.Message != msg {
			r.recorder.Eventf(nb, nil, corev1.EventTypeWarning, EventInvalidSpec, "Validate", "%s", msg)
		}
		nb.Status.Phase = tensorstackv1beta1.NotebookFailed
		setCondition(&nb.Status.Conditions, tensorstackv1beta1.ConditionReady, condition{corev1.ConditionFalse, ReasonInvalidSpec, msg})
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
			if c := findCondition(nb.Status.Conditions, ConditionSSHReady); c == nil || c.Message != kc.message {
				r.recorder.Eventf(nb, nil, corev1.EventTypeWarning, EventSSHKeys, "CheckSecrets", "%s", kc.message)
			}
			// Secrets are not watched: look again for a fix.
			result.RequeueAfter = secretRetry
		}
		setCondition(&nb.Status.Conditions, ConditionSSHReady, kc)
	} else {
		removeCondition(&nb.Status.Conditions, ConditionSSHReady)
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
	setCondition(&nb.Status.Conditions, tensorstackv1beta1.ConditionReady, o.ready)
	return nil
}

// ensure makes the access Secret, the NetworkPolicy, the StatefulSet and
// the Services of nb and sets the SSH status; it returns the StatefulSet.
func (r *Reconciler) ensure(ctx context.Context, nb *tensorstackv1beta1.Notebook, name string, keys []string) (*appsv1.StatefulSet, error) {
	log := ctrl.LoggerFrom(ctx)
	created := func(kind string, obj client.Object) {
		log.V(3).Info("Created "+kind, "name", obj.GetName())
		r.recorder.Eventf(nb, obj, corev1.EventTypeNormal, EventCreated, "Create"+kind, "Created %s %s", kind, obj.GetName())
	}
	access := interactive.Writer{Client: r.objects.client, Reader: r.objects.reader, APIReader: r.objects.apiReader, Scheme: r.objects.scheme}
	sshEnabled := nb.Spec.SSH != nil && nb.Spec.SSH.Enabled
	if err := access.EnsureAccess(ctx, r.recorder, nb, nb.Namespace, name, objectLabels(nb, name, "notebook"), map[string]string{NotebookLabelKey: name}, sshEnabled); err != nil {
		return nil, err
	}
	sts, isNew, err := r.objects.ensureStatefulSet(ctx, nb, statefulSet(nb, name, r.image, keys))
	if err != nil {
		return nil, err
	}
	if isNew {
		created("StatefulSet", sts)
	}
	svc, isNew, err := r.objects.ensureService(ctx, nb, httpService(nb, name))
	if err != nil {
		return nil, err
	}
	if isNew {
		created("Service", svc)
	}
	if nb.Spec.SSH == nil || !nb.Spec.SSH.Enabled {
		nb.Status.SSH = nil
		deleted, err := r.objects.deleteService(ctx, nb, nb.Namespace, SSHServiceName(name))
		if err != nil {
			return nil, fmt.Errorf("deleting Service %s: %w", SSHServiceName(name), err)
		}
		if deleted {
			log.V(3).Info("Deleted Service", "name", SSHServiceName(name))
			r.recorder.Eventf(nb, nil, corev1.EventTypeNormal, EventDeleted, "DeleteService", "Deleted Service %s: SSH is disabled", SSHServiceName(name))
		}
		return sts, nil
	}
	ssh, isNew, err := r.objects.ensureService(ctx, nb, sshService(nb, name))
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
	if err := r.objects.reader.Get(ctx, client.ObjectKey{Namespace: sts.Namespace, Name: PodName(sts.Name)}, pod); err != nil {
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

// podNotebook maps a pod, through the StatefulSet its NotebookLabelKey
// names, to the Notebook controlling the StatefulSet.
func (r *Reconciler) podNotebook(ctx context.Context, pod client.Object) []reconcile.Request {
	name := pod.GetLabels()[NotebookLabelKey]
	if name == "" {
		return nil
	}
	sts := &appsv1.StatefulSet{}
	if err := r.objects.reader.Get(ctx, client.ObjectKey{Namespace: pod.GetNamespace(), Name: name}, sts); err != nil {
		return nil
	}
	ref := metav1.GetControllerOf(sts)
	if ref == nil || ref.Kind != "Notebook" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: sts.Namespace, Name: ref.Name}}}
}
