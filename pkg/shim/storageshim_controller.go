package shim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// PVFinalizer lets the controller delete a StorageShim's PV (never its data:
// the reclaim policy is Retain) before the StorageShim goes.
const PVFinalizer = "tensorstack.dev/storageshim-pv"

// PVCLabelKey labels the PVCs the controller creates with their shim's UID,
// so that the manager caches those PVCs and no others.
const PVCLabelKey = "tensorstack.dev/storageshim"

// Reconciler turns each StorageShim into a static PV for the csi-s3 or
// ceph-csi driver and a PVC of the same name bound to it, and reports the
// PVC's phase and every failure in the shim's status.
type Reconciler struct {
	client client.Client
	// secrets reads Secrets straight from the API server: the controller
	// only gets the Secrets shims name and never caches or lists Secrets.
	secrets client.Reader
	// apiReader reads from the API server what the cache does not hold:
	// PVs, and PVCs created before they carried PVCLabelKey.
	apiReader client.Reader
	recorder  events.EventRecorder
	// s3Driver is the CSI driver name of S3 volumes.
	s3Driver string
	// cephDrivers are the CSI drivers a CephFS shim's ConfigMap may name;
	// cephNamespaces are the namespaces besides the shim's own its
	// ConfigMap may be in (see AllowCephFS).
	cephDrivers, cephNamespaces []string
}

// DefaultCephFSDriver is the CSI driver CephFS shims may use by default.
const DefaultCephFSDriver = "cephfs.csi.ceph.com"

// AllowCephFS sets the CSI drivers a CephFS shim's cluster ConfigMap may
// name (DefaultCephFSDriver when empty) and the namespaces, besides the
// shim's own, that ConfigMap may be in (none when empty). A shim cannot make
// the controller create PVs for other drivers, nor learn whether ConfigMaps
// exist in other namespaces.
func (r *Reconciler) AllowCephFS(drivers, namespaces []string) *Reconciler {
	r.cephDrivers, r.cephNamespaces = drivers, namespaces
	return r
}

// failureRetry is how soon a shim that failed for a user error is retried.
// Secrets and ConfigMaps are not watched (the controller reads them from the
// API server), so a fixed Secret or ConfigMap is noticed then; a fixed spec
// is noticed at once.
const failureRetry = 30 * time.Second

// NewReconciler returns a reconciler that writes S3 PVs for the CSI driver
// s3Driver and reads Secrets, PVs and unlabelled PVCs through the uncached
// apiReader. The client's cache must hold the PVCs that carry PVCLabelKey
// and must not cache ConfigMaps.
func NewReconciler(c client.Client, apiReader client.Reader, recorder events.EventRecorder, s3Driver string) *Reconciler {
	if s3Driver == "" {
		s3Driver = s3volume.DefaultDriverName
	}
	return &Reconciler{client: c, secrets: quietReader{apiReader}, apiReader: apiReader, recorder: recorder, s3Driver: s3Driver}
}

// quietReader reads with a context whose logger discards everything:
// client-go traces requests through the context's logger, response bodies
// included from -v=8, and a Secret's body must never reach the log.
type quietReader struct{ client.Reader }

// Get reads obj without request tracing.
func (q quietReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return q.Reader.Get(logr.NewContext(ctx, logr.Discard()), key, obj, opts...)
}

// List reads list without request tracing.
func (q quietReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return q.Reader.List(logr.NewContext(ctx, logr.Discard()), list, opts...)
}

// +kubebuilder:rbac:groups=tensorstack.dev,resources=storageshims,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=storageshims/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=storageshims/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get;create;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// SetupWithManager registers the reconciler: it watches StorageShims and the
// PVCs they own. The Secrets and ConfigMaps shims name are read when a shim
// is reconciled, not watched (see failureRetry).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&tensorstackv1beta2.StorageShim{}).
		Owns(&corev1.PersistentVolumeClaim{}).
		Complete(r)
}

// Reconcile brings one StorageShim's PV, PVC and status up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
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
	if phase != corev1.ClaimBound {
		if err := r.releaseClaimRef(ctx, pvc); err != nil {
			return ctrl.Result{}, err
		}
	}
	if phase == corev1.ClaimBound {
		return ctrl.Result{}, r.setStatus(ctx, shim, phase, metav1.ConditionTrue, ReasonBound,
			fmt.Sprintf("PVC %s is bound to PV %s", pvc.Name, pvc.Spec.VolumeName))
	}
	return ctrl.Result{}, r.setStatus(ctx, shim, phase, metav1.ConditionFalse, ReasonPending,
		fmt.Sprintf("waiting for PVC %s to bind (phase %q)", pvc.Name, phase))
}

// ensureVolume checks the shim's references, then creates its PV and PVC if
// missing, and returns the PVC. A *shimFailure means the user must act.
func (r *Reconciler) ensureVolume(ctx context.Context, shim *tensorstackv1beta2.StorageShim) (*corev1.PersistentVolumeClaim, error) {
	pv, err := r.desiredPV(ctx, shim)
	if err != nil {
		return nil, err
	}

	pvc, err := r.existingPVC(ctx, shim)
	if err != nil {
		return nil, err
	}

	if err := r.client.Create(ctx, pv); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating PV %s: %w", pv.Name, err)
	}
	if pvc != nil {
		return pvc, nil
	}
	pvc = newPVC(shim, pv)
	pvc.Labels = map[string]string{PVCLabelKey: string(shim.UID)}
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
func (r *Reconciler) desiredPV(ctx context.Context, shim *tensorstackv1beta2.StorageShim) (*corev1.PersistentVolume, error) {
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
		if ns := shim.Spec.CephFS.Server.ConfigMapRef.Namespace; ns != "" && ns != shim.Namespace && !slices.Contains(r.cephNamespaces, ns) {
			return nil, failf(ReasonInvalidSpec, "spec.cephfs.server.configMapRef.namespace %q is not allowed: use a ConfigMap in namespace %s or in one the administrator allows (%s)",
				ns, shim.Namespace, strings.Join(r.cephNamespaces, ", "))
		}
		cluster, err := r.cephCluster(ctx, shim)
		if err != nil {
			return nil, err
		}
		drivers := r.cephDrivers
		if len(drivers) == 0 {
			drivers = []string{DefaultCephFSDriver}
		}
		if !slices.Contains(drivers, cluster[CephDriverKey]) {
			return nil, failf(ReasonConfigMapInvalid, "ConfigMap %s names CSI driver %q, which is not allowed for CephFS (allowed: %s)",
				shim.Spec.CephFS.Server.ConfigMapRef.Name, cluster[CephDriverKey], strings.Join(drivers, ", "))
		}
		return cephfsPV(shim, cluster), nil
	default:
		return nil, failf(ReasonInvalidSpec, "spec.type %q is not s3 or cephfs", shim.Spec.Type)
	}
}

// setStatus writes phase and the Ready condition, only when they changed.
func (r *Reconciler) setStatus(ctx context.Context, shim *tensorstackv1beta2.StorageShim, phase corev1.PersistentVolumeClaimPhase, status metav1.ConditionStatus, reason, message string) error {
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
func (r *Reconciler) finalize(ctx context.Context, shim *tensorstackv1beta2.StorageShim) error {
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

// existingPVC returns the shim's PVC, or nil if there is none. The cache
// holds only labelled PVCs; a PVC it lacks is looked up on the API server,
// and labelled if the shim owns it (created before the label existed).
func (r *Reconciler) existingPVC(ctx context.Context, shim *tensorstackv1beta2.StorageShim) (*corev1.PersistentVolumeClaim, error) {
	key := client.ObjectKey{Namespace: shim.Namespace, Name: shim.Name}
	pvc := &corev1.PersistentVolumeClaim{}
	err := r.client.Get(ctx, key, pvc)
	if apierrors.IsNotFound(err) {
		err = r.apiReader.Get(ctx, key, pvc)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("getting PVC: %w", err)
	}
	if !metav1.IsControlledBy(pvc, shim) {
		return nil, failf(ReasonPVCConflict, "PVC %s already exists and is not owned by this StorageShim; delete it or choose another name", shim.Name)
	}
	if _, ok := pvc.Labels[PVCLabelKey]; !ok {
		before := pvc.DeepCopy()
		if pvc.Labels == nil {
			pvc.Labels = map[string]string{}
		}
		pvc.Labels[PVCLabelKey] = string(shim.UID)
		if err := r.client.Patch(ctx, pvc, client.MergeFrom(before)); err != nil {
			return nil, fmt.Errorf("labelling PVC %s: %w", pvc.Name, err)
		}
		ctrl.LoggerFrom(ctx).V(3).Info("Labelled PVC", "pvc", pvc.Name)
	}
	return pvc, nil
}

// releaseClaimRef lets the shim's PV bind to pvc when the PV is still
// claimed by an earlier PVC of the same name (the user deleted the PVC and
// the controller recreated it; the Retain PV went Released). It drops the
// claim's uid and resourceVersion so the PV controller binds the PV to the
// current PVC; the volume's data is untouched.
func (r *Reconciler) releaseClaimRef(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	if pvc.Spec.VolumeName == "" || !pvc.DeletionTimestamp.IsZero() {
		return nil
	}
	pv := &corev1.PersistentVolume{}
	if err := r.apiReader.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); err != nil {
		return client.IgnoreNotFound(err)
	}
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.Namespace != pvc.Namespace || ref.Name != pvc.Name || ref.UID == "" || ref.UID == pvc.UID {
		return nil
	}
	// Test on the stale uid, so a PV bound meanwhile is left alone.
	patch := fmt.Sprintf(`[{"op":"test","path":"/spec/claimRef/uid","value":%q},`+
		`{"op":"remove","path":"/spec/claimRef/uid"},{"op":"replace","path":"/spec/claimRef/resourceVersion","value":""}]`, ref.UID)
	if err := r.client.Patch(ctx, pv, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
		return fmt.Errorf("releasing PV %s for PVC %s: %w", pv.Name, pvc.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Released PV of a deleted PVC for its successor", "pv", pv.Name, "pvc", pvc.Name)
	r.recorder.Eventf(pvc, pv, corev1.EventTypeNormal, "Rebinding", "Reconcile", "PV %s was claimed by a deleted PVC; rebinding it to this PVC", pv.Name)
	return nil
}
