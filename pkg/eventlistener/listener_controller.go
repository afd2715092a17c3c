package eventlistener

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// staleRetry is when a reconcile that met a stale cache runs again.
const staleRetry = time.Second

// ListenerReconciler keeps the Deployment and Service of each
// EventListener, and its status.
type ListenerReconciler struct {
	client   client.Client
	objects  objectWriter
	recorder events.EventRecorder
	opts     Options
}

// NewListenerReconciler returns a reconciler that reads listeners and
// triggers and writes through c, reads Deployments and Services through
// reader (or apiReader, when a name is taken), records events with
// recorder and runs opts.Image.
func NewListenerReconciler(c client.Client, reader, apiReader client.Reader, recorder events.EventRecorder, opts Options) *ListenerReconciler {
	if opts.Image == "" {
		opts.Image = DefaultImage
	}
	return &ListenerReconciler{client: c, objects: objectWriter{client: c, reader: reader, apiReader: apiReader, scheme: c.Scheme()}, recorder: recorder, opts: opts}
}

// +kubebuilder:rbac:groups=tensorstack.dev,resources=eventlisteners;workflowtriggers,verbs=get;list;watch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=eventlisteners/status;workflowtriggers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update

// Reconcile makes the listener's Deployment, with the URLs of the triggers
// that name it, and Service, then writes its address and Ready condition.
func (r *ListenerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	el := &triggersv1beta1.EventListener{}
	if err := r.client.Get(ctx, req.NamespacedName, el); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if el.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("eventListener", klog.KObj(el))
	ctx = ctrl.LoggerInto(ctx, log)
	log.V(2).Info("Reconciling EventListener")

	old := el.Status.DeepCopy()
	name := ListenerObjectName(el.Name, el.UID)
	el.Status.Address = &triggersv1beta1.EventListenerAddress{
		InClusterURL: InClusterURL(el.Namespace, name),
		URL:          ExternalURL(r.opts.ExternalHost, el.Namespace, el.Name),
	}
	dep, err := r.reconcileObjects(ctx, el, name)
	if stale(err) {
		// The cache has not seen what this controller created.
		return ctrl.Result{RequeueAfter: staleRetry}, nil
	}
	if err != nil {
		r.recorder.Eventf(el, nil, corev1.EventTypeWarning, EventFailed, "Reconcile", "%v", err)
		setReady(&el.Status.Conditions, ready{corev1.ConditionFalse, ReasonDeploymentFailed, err.Error()})
	} else {
		setReady(&el.Status.Conditions, readiness(dep, "EventListener"))
	}
	if !equality.Semantic.DeepEqual(old, &el.Status) {
		if uerr := r.client.Status().Update(ctx, el); apierrors.IsConflict(uerr) && err == nil {
			return ctrl.Result{RequeueAfter: staleRetry}, nil
		} else if uerr != nil {
			err = errors.Join(err, fmt.Errorf("updating status: %w", uerr))
		}
	}
	return ctrl.Result{}, err
}

// reconcileObjects makes the listener's Deployment and Service and returns
// the Deployment.
func (r *ListenerReconciler) reconcileObjects(ctx context.Context, el *triggersv1beta1.EventListener, name string) (*appsv1.Deployment, error) {
	subscribers, err := r.subscribers(ctx, el)
	if err != nil {
		return nil, err
	}
	s := serverSpec{
		name:      name,
		labels:    objectLabels(name, listenerComponent, serverconfig.EventListenerLabelKey, el.Name),
		replicas:  el.Spec.Replicas,
		resources: el.Spec.Resources,
		image:     r.opts.Image,
		command:   "listen",
		env: []corev1.EnvVar{
			{Name: serverconfig.EnvListenerNamespace, Value: el.Namespace},
			{Name: serverconfig.EnvListenerName, Value: el.Name},
			{Name: serverconfig.EnvSubscribers, Value: strings.Join(subscribers, ",")},
		},
	}
	if a := el.Spec.Auth; a != nil {
		addSecret(&s, a)
	}
	return r.objects.ensure(ctx, r.recorder, el, s)
}

// secretDir is where a listener's Secret is mounted; the secret is the file
// secretFile in it.
const (
	secretDir  = "/etc/workflow-events/auth"
	secretFile = "secret"
)

// addSecret mounts the listener's Secret into s, read-only and readable
// by the server's group only, and points the server at the file. The
// secret itself is in no field of the Deployment.
func addSecret(s *serverSpec, a *triggersv1beta1.EventListenerAuth) {
	key := a.Key
	if key == "" {
		key = triggersv1beta1.DefaultSecretKey
	}
	s.volumes = append(s.volumes, corev1.Volume{Name: "auth", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName:  a.SecretName,
		Items:       []corev1.KeyToPath{{Key: key, Path: secretFile}},
		DefaultMode: ptr.To[int32](0o440),
	}}})
	s.mounts = append(s.mounts, corev1.VolumeMount{Name: "auth", MountPath: secretDir, ReadOnly: true})
	s.env = append(s.env, corev1.EnvVar{Name: serverconfig.EnvSecretFile, Value: secretDir + "/" + secretFile})
}

// subscribers returns the URLs of the valid triggers of the listener's
// namespace that name it, sorted.
func (r *ListenerReconciler) subscribers(ctx context.Context, el *triggersv1beta1.EventListener) ([]string, error) {
	var list triggersv1beta1.WorkflowTriggerList
	if err := r.client.List(ctx, &list, client.InNamespace(el.Namespace)); err != nil {
		return nil, fmt.Errorf("listing WorkflowTriggers: %w", err)
	}
	var urls []string
	for i := range list.Items {
		wt := &list.Items[i]
		if wt.DeletionTimestamp != nil || !slices.Contains(listenerNames(wt), el.Name) || len(ValidateTrigger(wt)) > 0 {
			continue
		}
		urls = append(urls, TriggerURL(wt.Namespace, TriggerObjectName(wt.Name, wt.UID)))
	}
	slices.Sort(urls)
	return urls, nil
}

// triggerListeners maps a trigger to the listeners it names.
func (r *ListenerReconciler) triggerListeners(_ context.Context, o client.Object) []reconcile.Request {
	wt, ok := o.(*triggersv1beta1.WorkflowTrigger)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	for _, name := range listenerNames(wt) {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: wt.Namespace, Name: name}})
	}
	return reqs
}

// listenerNames returns the listeners the trigger names, each once.
func listenerNames(wt *triggersv1beta1.WorkflowTrigger) []string {
	var names []string
	for _, s := range wt.Spec.EventSources {
		if !slices.Contains(names, s.EventListenerName) {
			names = append(names, s.EventListenerName)
		}
	}
	return names
}

// ensure makes the Deployment and Service of s, owned by owner, recording
// their creation, and returns the Deployment.
func (w objectWriter) ensure(ctx context.Context, recorder events.EventRecorder, owner client.Object, s serverSpec) (*appsv1.Deployment, error) {
	log := ctrl.LoggerFrom(ctx)
	dep, created, err := w.ensureDeployment(ctx, owner, s.deployment(owner.GetNamespace()))
	if err != nil {
		return nil, err
	}
	if created {
		log.V(3).Info("Created Deployment", "deployment", klog.KObj(dep))
		recorder.Eventf(owner, dep, corev1.EventTypeNormal, EventCreated, "CreateDeployment", "Created Deployment %s", dep.Name)
	}
	svc := s.service(owner.GetNamespace())
	if created, err = w.ensureService(ctx, owner, svc); err != nil {
		return nil, err
	}
	if created {
		log.V(3).Info("Created Service", "service", klog.KObj(svc))
		recorder.Eventf(owner, svc, corev1.EventTypeNormal, EventCreated, "CreateService", "Created Service %s", svc.Name)
	}
	return dep, nil
}
