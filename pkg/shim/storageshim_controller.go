package shim

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
	"github.com/accelstack/accelstack/pkg/shim/csi"
)

// PVFinalizer lets the controller delete a StorageShim's PV (never its data:
// the reclaim policy is Retain) before the StorageShim goes.
const PVFinalizer = "tensorstack.dev/storageshim-pv"

// StorageShimReconciler turns each StorageShim into a static PV for the
// csi-s3 or ceph-csi driver and a PVC of the same name bound to it, and
// reports the PVC's phase and every failure in the shim's status.
type StorageShimReconciler struct {
	client client.Client
	// secrets reads Secrets straight from the API server: the controller
	// only gets the Secrets shims name and never caches or lists Secrets.
	secrets  client.Reader
	recorder events.EventRecorder
	// s3Driver is the CSI driver name of S3 volumes.
	s3Driver string
}

// failureRetry is how soon a shim that failed for a user error is retried.
// Secrets are not watched (see secrets), so a fixed Secret is noticed then;
// a fixed ConfigMap or spec is noticed at once.
const failureRetry = 30 * time.Second

// NewStorageShimReconciler returns a reconciler that writes S3 PVs for the
// CSI driver s3Driver and reads Secrets through the uncached secrets reader.
func NewStorageShimReconciler(c client.Client, secrets client.Reader, recorder events.EventRecorder, s3Driver string) *StorageShimReconciler {
	if s3Driver == "" {
		s3Driver = csi.DefaultDriverName
	}
	return &StorageShimReconciler{client: c, secrets: secrets, recorder: recorder, s3Driver: s3Driver}
}

// +kubebuilder:rbac:groups=tensorstack.dev,resources=storageshims,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=storageshims/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=storageshims/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// SetupWithManager registers the reconciler: it watches StorageShims, the
// PVCs they own, and the ConfigMaps they reference.
func (r *StorageShimReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&tensorstackv1beta2.StorageShim{}).
		Owns(&corev1.PersistentVolumeClaim{}).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.shimsReferencing)).
		Complete(r)
}

// Reconcile brings one StorageShim's PV, PVC and status up to date.
func (r *StorageShimReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	shim := &tensorstackv1beta2.StorageShim{}
	if err := r.client.Get(ctx, req.NamespacedName, shim); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("storageShim", klog.KObj(shim))
	ctx = ctrl.LoggerInto(ctx, log)
	log.V(2).Info("Reconciling StorageShim")

	if !shim.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, shim)
	}
	if controllerutil.AddFinalizer(shim, PVFinalizer) {
		if err := r.client.Update(ctx, shim); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}

	pvc, err := r.ensureVolume(ctx, shim)
	var failure *shimFailure
	switch {
	case errors.As(err, &failure):
		log.V(3).Info("StorageShim cannot be served", "reason", failure.reason, "message", failure.message)
		r.recorder.Eventf(shim, nil, corev1.EventTypeWarning, failure.reason, "Reconcile", failure.message)
		return ctrl.Result{RequeueAfter: failureRetry}, r.setStatus(ctx, shim, "", metav1.ConditionFalse, failure.reason, failure.message)
	case err != nil:
		return ctrl.Result{}, err
	}

	phase := pvc.Status.Phase
	if phase == corev1.ClaimBound {
		return ctrl.Result{}, r.setStatus(ctx, shim, phase, metav1.ConditionTrue, ReasonBound,
			fmt.Sprintf("PVC %s is bound to PV %s", pvc.Name, pvc.Spec.VolumeName))
	}
	return ctrl.Result{}, r.setStatus(ctx, shim, phase, metav1.ConditionFalse, ReasonPending,
		fmt.Sprintf("waiting for PVC %s to bind (phase %q)", pvc.Name, phase))
}

// ensureVolume checks the shim's references, then creates its PV and PVC if
// missing, and returns the PVC. A *shimFailure means the user must act.
func (r *StorageShimReconciler) ensureVolume(ctx context.Context, shim *tensorstackv1beta2.StorageShim) (*corev1.PersistentVolumeClaim, error) {
	pv, err := r.desiredPV(ctx, shim)
	if err != nil {
		return nil, err
	}

	pvc := &corev1.PersistentVolumeClaim{}
	err = r.client.Get(ctx, client.ObjectKey{Namespace: shim.Namespace, Name: shim.Name}, pvc)
	switch {
	case err == nil:
		if !metav1.IsControlledBy(pvc, shim) {
			return nil, failf(ReasonPVCConflict, "PVC %s already exists and is not owned by this StorageShim; delete it or choose another name", shim.Name)
		}
	case apierrors.IsNotFound(err):
		pvc = nil
	default:
		return nil, fmt.Errorf("getting PVC: %w", err)
	}

	if err := r.client.Create(ctx, pv); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating PV %s: %w", pv.Name, err)
	}
	if pvc != nil {
		return pvc, nil
	}
	pvc = newPVC(shim, pv)
	if err := controllerutil.SetControllerReference(shim, pvc, r.client.Scheme()); err != nil {
		return nil, fmt.Errorf("owning PVC: %w", err)
	}
	if err := r.client.Create(ctx, pvc); err != nil {
		return nil, fmt.Errorf("creating PVC %s: %w", pvc.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(3).Info("Created PV and PVC", "pv", pv.Name, "pvc", pvc.Name)
	r.recorder.Eventf(shim, nil, corev1.EventTypeNormal, "Created", "Reconcile", "Created PV %s and PVC %s", pv.Name, pvc.Name)
	return pvc, nil
}

// desiredPV validates the shim's references and returns the PV it needs.
func (r *StorageShimReconciler) desiredPV(ctx context.Context, shim *tensorstackv1beta2.StorageShim) (*corev1.PersistentVolume, error) {
	switch shim.Spec.Type {
	case tensorstackv1beta2.StorageShimTypeS3:
		if shim.Spec.S3 == nil {
			return nil, failf(ReasonInvalidSpec, "spec.s3 is required when spec.type is s3")
		}
		bucket, prefix, err := ParseS3URI(shim.Spec.S3.URI)
		if err != nil {
			return nil, failf(ReasonInvalidSpec, "%v", err)
		}
		if err := r.checkS3Secret(ctx, shim.Namespace, shim.Spec.S3.SecretRef.Name); err != nil {
			return nil, err
		}
		return s3PV(shim, r.s3Driver, bucket, prefix), nil
	case tensorstackv1beta2.StorageShimTypeCephFS:
		if shim.Spec.CephFS == nil {
			return nil, failf(ReasonInvalidSpec, "spec.cephfs is required when spec.type is cephfs")
		}
		cluster, err := r.cephCluster(ctx, shim)
		if err != nil {
			return nil, err
		}
		return cephfsPV(shim, cluster), nil
	default:
		return nil, failf(ReasonInvalidSpec, "spec.type %q is not s3 or cephfs", shim.Spec.Type)
	}
}

// setStatus writes phase and the Ready condition, only when they changed.
func (r *StorageShimReconciler) setStatus(ctx context.Context, shim *tensorstackv1beta2.StorageShim, phase corev1.PersistentVolumeClaimPhase, status metav1.ConditionStatus, reason, message string) error {
	before := shim.DeepCopy()
	shim.Status.Phase = phase
	setCondition(&shim.Status.Conditions, tensorstackv1beta2.StorageShimReady, status, reason, message)
	if equalStatus(before.Status, shim.Status) {
		return nil
	}
	if err := r.client.Status().Patch(ctx, shim, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}

// finalize deletes the shim's PV object (the data stays: Retain), then lets
// the shim go. The PVC goes with the shim through its owner reference.
func (r *StorageShimReconciler) finalize(ctx context.Context, shim *tensorstackv1beta2.StorageShim) error {
	if !controllerutil.ContainsFinalizer(shim, PVFinalizer) {
		return nil
	}
	pv := &corev1.PersistentVolume{}
	pv.Name = PVName(shim)
	if err := r.client.Delete(ctx, pv); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting PV %s: %w", pv.Name, err)
	}
	controllerutil.RemoveFinalizer(shim, PVFinalizer)
	if err := r.client.Update(ctx, shim); err != nil {
		return fmt.Errorf("removing finalizer: %w", err)
	}
	ctrl.LoggerFrom(ctx).V(3).Info("Released PV", "pv", pv.Name)
	return nil
}

// shimsReferencing maps a ConfigMap to the shims that reference it.
func (r *StorageShimReconciler) shimsReferencing(ctx context.Context, obj client.Object) []reconcile.Request {
	var shims tensorstackv1beta2.StorageShimList
	if err := r.client.List(ctx, &shims); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing StorageShims for a changed reference")
		return nil
	}
	var reqs []reconcile.Request
	for i := range shims.Items {
		if references(&shims.Items[i], obj) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&shims.Items[i])})
		}
	}
	return reqs
}

// references reports whether shim refers to the ConfigMap obj.
func references(shim *tensorstackv1beta2.StorageShim, obj client.Object) bool {
	if shim.Spec.CephFS == nil {
		return false
	}
	ref := shim.Spec.CephFS.Server.ConfigMapRef
	ns := ref.Namespace
	if ns == "" {
		ns = shim.Namespace
	}
	return ref.Name == obj.GetName() && ns == obj.GetNamespace()
}
