package project

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// The reasons of the Ready condition and of events.
const (
	ReasonReady                = "ProjectReady"
	ReasonNamespaceNotOwned    = "NamespaceNotOwned"
	ReasonNamespaceTerminating = "NamespaceTerminating"
	ReasonQuotaProfileNotFound = "QuotaProfileNotFound"
	ReasonApplyFailed          = "ApplyFailed"
	ReasonNamespaceKept        = "NamespaceKept"
	ReasonNamespaceDeleted     = "NamespaceDeleted"
)

// Reconciler makes each Project's namespace, quota, policy and
// ServiceAccount as its spec says.
type Reconciler struct {
	client client.Client
	// reader reads what the controller's caches do not hold: namespaces
	// not marked as a Project's.
	reader   client.Reader
	recorder events.EventRecorder
	// policyNamespaces are the namespaces the default NetworkPolicy admits.
	policyNamespaces []string
	// controllers and gateway, when set, are bound to
	// ControllersClusterRole and GatewayClusterRole in each project
	// namespace.
	controllers, gateway *rbacv1.Subject
}

// NewReconciler returns a Reconciler writing with c and reading unmarked
// namespaces with reader; nil policyNamespaces means
// DefaultPolicyNamespaces.
func NewReconciler(c client.Client, reader client.Reader, recorder events.EventRecorder, policyNamespaces []string) *Reconciler {
	if policyNamespaces == nil {
		policyNamespaces = DefaultPolicyNamespaces
	}
	return &Reconciler{client: c, reader: reader, recorder: recorder, policyNamespaces: policyNamespaces}
}

// notReady is a fault the Project's Ready condition reports.
type notReady struct{ reason, message string }

func (e *notReady) Error() string { return e.message }

// +kubebuilder:rbac:groups=tensorstack.dev,resources=projects,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=projects/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=projects/finalizers,verbs=update
// +kubebuilder:rbac:groups=tensorstack.dev,resources=quotaprofiles,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=resourcequotas,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=accelstack-managed-project-sa

// Reconcile brings the Project req names to its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &tensorstackv1beta1.Project{}
	if err := r.client.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("project", klog.KObj(p))
	ctx = ctrl.LoggerInto(ctx, log)
	log.V(2).Info("Reconciling Project")
	if !p.DeletionTimestamp.IsZero() {
		err := r.finalize(ctx, p)
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	err := r.reconcile(ctx, p)
	if apierrors.IsConflict(err) {
		// The cache held an older Project or object than the API server:
		// read them again rather than report a fault.
		log.V(3).Info("Object changed meanwhile; reconciling again", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}

// conflictRetry is how soon a reconcile that met a newer version of an
// object than it read runs again.
const conflictRetry = time.Second

// reconcile adds the finalizer, applies p and writes its status; a
// conflict comes back as it is, without a status written for it.
func (r *Reconciler) reconcile(ctx context.Context, p *tensorstackv1beta1.Project) error {
	if controllerutil.AddFinalizer(p, Finalizer) {
		if err := r.client.Update(ctx, p); err != nil {
			return fmt.Errorf("adding the finalizer: %w", err)
		}
	}
	// apply records the quota in the status: compare with the status read.
	read := p.Status.DeepCopy()
	err := r.apply(ctx, p)
	var nr *notReady
	switch {
	case errors.As(err, &nr):
		r.recorder.Eventf(p, nil, corev1.EventTypeWarning, nr.reason, "Reconcile", "%s", nr.message)
		return r.setReady(ctx, p, read, corev1.ConditionFalse, nr.reason, nr.message)
	case apierrors.IsConflict(err):
		return err
	case err != nil:
		if serr := r.setReady(ctx, p, read, corev1.ConditionFalse, ReasonApplyFailed, err.Error()); serr != nil && !apierrors.IsConflict(serr) {
			ctrl.LoggerFrom(ctx).Error(serr, "Writing the Project status")
		}
		return err
	}
	return r.setReady(ctx, p, read, corev1.ConditionTrue, ReasonReady, "The namespace and its quota, network policy and service account are as the spec says")
}

// apply makes the namespace and the objects in it; a notReady error is a
// fault of the spec or the cluster that retrying now does not fix.
func (r *Reconciler) apply(ctx context.Context, p *tensorstackv1beta1.Project) error {
	if err := r.namespace(ctx, p); err != nil {
		return err
	}
	if err := r.quota(ctx, p); err != nil {
		return err
	}
	if err := r.policy(ctx, p); err != nil {
		return err
	}
	if err := r.serviceAccount(ctx, p); err != nil {
		return err
	}
	return r.systemRights(ctx, p)
}

// namespace creates the project's namespace with its Pod Security labels,
// or checks that the one there is the Project's and brings its labels to
// the Project's level.
func (r *Reconciler) namespace(ctx context.Context, p *tensorstackv1beta1.Project) error {
	ns := &corev1.Namespace{}
	err := r.reader.Get(ctx, client.ObjectKey{Name: p.Name}, ns)
	switch {
	case apierrors.IsNotFound(err):
		qp, _, err := r.profile(ctx, p)
		if err != nil {
			return err
		}
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Labels: projectLabels(p)}}
		applyPodSecurity(ns, podSecurityLevel(p, qp))
		if err := r.client.Create(ctx, ns); err != nil {
			return fmt.Errorf("creating namespace %s: %w", p.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("Created namespace", "namespace", p.Name)
		return nil
	case err != nil:
		return fmt.Errorf("reading namespace %s: %w", p.Name, err)
	case !ownedBy(ns, p.Name):
		return &notReady{ReasonNamespaceNotOwned, fmt.Sprintf("namespace %s exists and is not a Project's (no label %s=%s); it is not taken over", p.Name, ProjectLabelKey, p.Name)}
	case !ns.DeletionTimestamp.IsZero():
		return &notReady{ReasonNamespaceTerminating, fmt.Sprintf("namespace %s is being deleted; the Project is set up again once it is gone", p.Name)}
	}
	return r.podSecurity(ctx, p, ns)
}

// quota makes the project's ResourceQuota from the template or the
// QuotaProfile, removes it when the spec asks for none, and records its
// status. A missing QuotaProfile leaves the quota there as it was.
func (r *Reconciler) quota(ctx context.Context, p *tensorstackv1beta1.Project) error {
	var spec *corev1.ResourceQuotaSpec
	switch {
	case p.Spec.QuotaProfile != "":
		qp := &tensorstackv1beta1.QuotaProfile{}
		err := r.client.Get(ctx, client.ObjectKey{Name: p.Spec.QuotaProfile}, qp)
		if apierrors.IsNotFound(err) {
			return &notReady{ReasonQuotaProfileNotFound, fmt.Sprintf("QuotaProfile %s not found (spec.quotaProfile); the namespace's quota is left as it was", p.Spec.QuotaProfile)}
		}
		if err != nil {
			return fmt.Errorf("reading QuotaProfile %s: %w", p.Spec.QuotaProfile, err)
		}
		spec = &qp.Spec
	case p.Spec.ResourceQuota != nil && p.Spec.ResourceQuota.Template != nil:
		spec = &p.Spec.ResourceQuota.Template.Spec
	}
	rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: p.Name, Name: ResourceQuotaName}}
	if spec == nil {
		p.Status.ResourceQuota = nil
		return r.deleteOwned(ctx, p, rq)
	}
	if _, err := r.createOrUpdate(ctx, p, rq, func() { rq.Spec = *spec.DeepCopy() }); err != nil {
		return fmt.Errorf("applying ResourceQuota %s: %w", ResourceQuotaName, err)
	}
	p.Status.ResourceQuota = &tensorstackv1beta1.ProjectResourceQuotaStatus{Name: rq.Name, ResourceQuotaStatus: *rq.Status.DeepCopy()}
	return nil
}

// policy makes the project's NetworkPolicy, or removes it when the spec
// asks for none.
func (r *Reconciler) policy(ctx context.Context, p *tensorstackv1beta1.Project) error {
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: p.Name, Name: NetworkPolicyName}}
	spec := policySpec(p, r.policyNamespaces)
	if spec == nil {
		return r.deleteOwned(ctx, p, np)
	}
	if _, err := r.createOrUpdate(ctx, p, np, func() { np.Spec = *spec }); err != nil {
		if apierrors.IsInvalid(err) {
			return &notReady{ReasonApplyFailed, fmt.Sprintf("spec.networkPolicy: %v", err)}
		}
		return fmt.Errorf("applying NetworkPolicy %s: %w", NetworkPolicyName, err)
	}
	return nil
}

// serviceAccount makes managed-project-sa and binds its ClusterRole.
func (r *Reconciler) serviceAccount(ctx context.Context, p *tensorstackv1beta1.Project) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: p.Name, Name: ServiceAccountName}}
	if _, err := r.createOrUpdate(ctx, p, sa, func() {}); err != nil {
		return fmt.Errorf("applying ServiceAccount %s: %w", ServiceAccountName, err)
	}
	want := roleBinding(p)
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: p.Name, Name: ServiceAccountName}}
	if _, err := r.createOrUpdate(ctx, p, rb, func() {
		if rb.CreationTimestamp.IsZero() {
			rb.RoleRef = want.RoleRef
		}
		rb.Subjects = want.Subjects
	}); err != nil {
		return fmt.Errorf("applying RoleBinding %s: %w", ServiceAccountName, err)
	}
	if rb.RoleRef == want.RoleRef {
		return nil
	}
	// The role of a binding cannot change: replace the binding.
	if err := r.client.Delete(ctx, rb, client.Preconditions{UID: &rb.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting RoleBinding %s, which names another role: %w", ServiceAccountName, err)
	}
	if err := controllerutil.SetControllerReference(p, want, r.client.Scheme()); err != nil {
		return fmt.Errorf("owning RoleBinding %s: %w", ServiceAccountName, err)
	}
	if err := r.client.Create(ctx, want); err != nil {
		return fmt.Errorf("creating RoleBinding %s again: %w", ServiceAccountName, err)
	}
	ctrl.LoggerFrom(ctx).Info("Replaced RoleBinding naming another role", "roleBinding", ServiceAccountName, "role", rb.RoleRef.Name)
	return nil
}

// createOrUpdate creates or updates obj, marked and owned by p, after
// mutate; an object of that name the Project does not own is refused.
func (r *Reconciler) createOrUpdate(ctx context.Context, p *tensorstackv1beta1.Project, obj client.Object, mutate func()) (controllerutil.OperationResult, error) {
	op, err := controllerutil.CreateOrUpdate(ctx, r.client, obj, func() error {
		if obj.GetResourceVersion() != "" && !metav1.IsControlledBy(obj, p) {
			if !ownedBy(obj, p.Name) {
				return &notReady{ReasonApplyFailed, fmt.Sprintf("%T %s/%s exists and is not the Project's", obj, obj.GetNamespace(), obj.GetName())}
			}
			// Left by an earlier Project of this name: take it back.
			obj.SetOwnerReferences(nil)
		}
		mutate()
		l := obj.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[ProjectLabelKey] = p.Name
		obj.SetLabels(l)
		return controllerutil.SetControllerReference(p, obj, r.client.Scheme())
	})
	if op != controllerutil.OperationResultNone {
		ctrl.LoggerFrom(ctx).V(3).Info("Applied object", "kind", fmt.Sprintf("%T", obj), "name", obj.GetName(), "operation", op)
	}
	return op, err
}

// deleteOwned deletes obj if it exists and p controls it.
func (r *Reconciler) deleteOwned(ctx context.Context, p *tensorstackv1beta1.Project, obj client.Object) error {
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, p) && !ownedBy(obj, p.Name) {
		return nil
	}
	if err := r.client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

// finalize deletes the namespace of a deleted Project when its deletion was
// confirmed, keeps it otherwise, and lets the Project go.
func (r *Reconciler) finalize(ctx context.Context, p *tensorstackv1beta1.Project) error {
	if !controllerutil.ContainsFinalizer(p, Finalizer) {
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	ns := &corev1.Namespace{}
	err := r.reader.Get(ctx, client.ObjectKey{Name: p.Name}, ns)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("reading namespace %s: %w", p.Name, err)
	case !ownedBy(ns, p.Name):
		// Never the Project's: nothing to release.
	case p.Annotations[DeleteNamespaceAnnotationKey] == "true":
		if ns.DeletionTimestamp.IsZero() {
			if err := r.client.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting namespace %s: %w", p.Name, err)
			}
			log.Info("Deleted namespace of deleted Project", "namespace", p.Name)
			r.recorder.Eventf(p, nil, corev1.EventTypeNormal, ReasonNamespaceDeleted, "Delete",
				"Namespace %s deleted, as %s confirmed", p.Name, DeleteNamespaceAnnotationKey)
		}
	default:
		log.Info("Kept namespace of deleted Project", "namespace", p.Name)
		r.recorder.Eventf(p, nil, corev1.EventTypeNormal, ReasonNamespaceKept, "Delete",
			"Namespace %s and its data kept: the Project was deleted without %s: \"true\"", p.Name, DeleteNamespaceAnnotationKey)
	}
	controllerutil.RemoveFinalizer(p, Finalizer)
	if err := r.client.Update(ctx, p); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing the finalizer: %w", err)
	}
	return nil
}

// setReady sets the Ready condition and writes p's status unless it is
// the same as read, the status as it was read.
func (r *Reconciler) setReady(ctx context.Context, p *tensorstackv1beta1.Project, read *tensorstackv1beta1.ProjectStatus, status corev1.ConditionStatus, reason, message string) error {
	now := metav1.Now()
	cond := tensorstackv1beta1.ProjectCondition{
		Type: tensorstackv1beta1.ProjectReady, Status: status, Reason: reason, Message: message,
		LastUpdateTime: now, LastTransitionTime: now,
	}
	found := false
	for i, c := range p.Status.Conditions {
		if c.Type != cond.Type {
			continue
		}
		found = true
		if c.Status == status {
			cond.LastTransitionTime = c.LastTransitionTime
		}
		if c.Status == status && c.Reason == reason && c.Message == message {
			cond.LastUpdateTime = c.LastUpdateTime
		}
		p.Status.Conditions[i] = cond
	}
	if !found {
		p.Status.Conditions = append(p.Status.Conditions, cond)
	}
	if equality.Semantic.DeepEqual(read, &p.Status) {
		return nil
	}
	if err := r.client.Status().Update(ctx, p); err != nil {
		return fmt.Errorf("writing the status: %w", err)
	}
	return nil
}
