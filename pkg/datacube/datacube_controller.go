package datacube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
)

// Condition messages, as the platform prints them.
const (
	MessageInitialized = "The DataCube is initialized"
	MessageComplete    = "The DataCube is complete"
)

// Reconciler runs each DataCube as a batch/v1 Job of the executor
// and mirrors the Job and its pod in the DataCube's status.
type Reconciler struct {
	client client.Client
	// apiReader finds a Job of a DataCube's Job name that the cache lacks
	// because it does not carry NameLabelKey.
	apiReader client.Reader
	recorder  events.EventRecorder
	image     string
}

// NewReconciler returns a reconciler that runs the executor image.
// The manager's cache must hold the DataCube Jobs and pods (those that
// carry NameLabelKey); apiReader reads from the API server.
func NewReconciler(c client.Client, apiReader client.Reader, recorder events.EventRecorder, image string) *Reconciler {
	if image == "" {
		image = executorenv.DefaultImage
	}
	return &Reconciler{client: c, apiReader: apiReader, recorder: recorder, image: image}
}

// +kubebuilder:rbac:groups=tensorstack.dev,resources=datacubes,verbs=get;list;watch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=datacubes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=create

// SetupWithManager registers the reconciler, watching DataCubes, their Jobs
// and the Jobs' pods.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&tensorstackv1beta1.DataCube{}).
		Owns(&batchv1.Job{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, pod client.Object) []reconcile.Request {
			name, ok := pod.GetLabels()[NameLabelKey]
			if !ok {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pod.GetNamespace(), Name: name}}}
		})).
		Complete(r)
}

// Reconcile creates the DataCube's destination PVC and Job if missing and
// brings its status up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	dc := &tensorstackv1beta1.DataCube{}
	if err := r.client.Get(ctx, req.NamespacedName, dc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("dataCube", klog.KObj(dc))
	ctx = ctrl.LoggerInto(ctx, log)
	log.V(2).Info("Reconciling DataCube")
	if !dc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}

	job, err := r.getJob(ctx, dc)
	switch {
	case apierrors.IsNotFound(err):
		if finished(dc) {
			return ctrl.Result{}, nil // the Job was deleted after the end; keep the outcome
		}
		if job, err = r.start(ctx, dc); err != nil {
			var invalid *invalidSpecError
			if errors.As(err, &invalid) {
				r.recorder.Eventf(dc, nil, corev1.EventTypeWarning, ReasonInvalidSpec, "Start", "%s", invalid.Error())
				return ctrl.Result{}, r.patchStatus(ctx, dc, func(st *tensorstackv1beta1.DataCubeStatus) {
					st.Phase = tensorstackv1beta1.DataCubeFailedPhase
					setCondition(st, tensorstackv1beta1.DataCubeFailed, corev1.ConditionTrue, ReasonInvalidSpec, invalid.Error())
				})
			}
			return ctrl.Result{}, err
		}
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("getting Job: %w", err)
	case !metav1.IsControlledBy(job, dc):
		msg := fmt.Sprintf("Job %s exists and is not owned by this DataCube", job.Name)
		return ctrl.Result{}, r.patchStatus(ctx, dc, func(st *tensorstackv1beta1.DataCubeStatus) {
			st.Phase = tensorstackv1beta1.DataCubeFailedPhase
			setCondition(st, tensorstackv1beta1.DataCubeFailed, corev1.ConditionTrue, ReasonJobConflict, msg)
		})
	}

	pod, err := r.latestPod(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.patchStatus(ctx, dc, func(st *tensorstackv1beta1.DataCubeStatus) {
		observe(st, job, pod)
	})
}

// getJob returns the DataCube's Job. A Job of that name the cache lacks
// (no NameLabelKey) is read from the API server, so that it shows as a
// conflict rather than a Job to create.
func (r *Reconciler) getJob(ctx context.Context, dc *tensorstackv1beta1.DataCube) (*batchv1.Job, error) {
	key := client.ObjectKey{Namespace: dc.Namespace, Name: JobName(dc)}
	job := &batchv1.Job{}
	err := r.client.Get(ctx, key, job)
	if apierrors.IsNotFound(err) {
		err = r.apiReader.Get(ctx, key, job)
	}
	return job, err
}

// invalidSpecError is a spec the controller cannot run; the CRD schema
// refuses most of these, this catches what it cannot.
type invalidSpecError struct{ err error }

func (e *invalidSpecError) Error() string { return e.err.Error() }

// start creates the destination PVC from its template if needed, then the Job.
func (r *Reconciler) start(ctx context.Context, dc *tensorstackv1beta1.DataCube) (*batchv1.Job, error) {
	job, err := newJob(dc, r.image)
	if err != nil {
		return nil, &invalidSpecError{err: err}
	}
	if err := r.ensurePVC(ctx, dc); err != nil {
		return nil, err
	}
	if err := controllerutil.SetControllerReference(dc, job, r.client.Scheme()); err != nil {
		return nil, fmt.Errorf("owning Job: %w", err)
	}
	if err := r.client.Create(ctx, job); err != nil {
		if apierrors.IsInvalid(err) {
			// Retrying cannot help: the API server refuses what the spec made.
			return nil, &invalidSpecError{err: fmt.Errorf("the Job for this DataCube is invalid: %w", err)}
		}
		return nil, fmt.Errorf("creating Job %s: %w", job.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(3).Info("Created Job", "job", job.Name)
	r.recorder.Eventf(dc, job, corev1.EventTypeNormal, "Created", "Start", "Created Job %s", job.Name)
	return job, nil
}

// ensurePVC creates the sink PVC from its template when it does not exist.
// The PVC is not owned by the DataCube: the data outlives the transfer.
func (r *Reconciler) ensurePVC(ctx context.Context, dc *tensorstackv1beta1.DataCube) error {
	ref := dc.Spec.Sink.PVC
	if dc.Spec.Sink.Type != tensorstackv1beta1.DataTypePVC || ref == nil || ref.Template == nil {
		return nil
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: *ref.Template.ObjectMeta.DeepCopy(),
		Spec:       *ref.Template.Spec.DeepCopy(),
	}
	pvc.Name, pvc.Namespace = ref.Name, dc.Namespace
	if err := r.client.Create(ctx, pvc); err != nil && !apierrors.IsAlreadyExists(err) {
		if apierrors.IsInvalid(err) {
			return &invalidSpecError{err: fmt.Errorf("spec.sink.pvc.template is invalid: %w", err)}
		}
		return fmt.Errorf("creating PVC %s from the template: %w", ref.Name, err)
	}
	return nil
}

// latestPod returns the Job's most recently created pod, or nil.
func (r *Reconciler) latestPod(ctx context.Context, job *batchv1.Job) (*corev1.Pod, error) {
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{"batch.kubernetes.io/controller-uid": string(job.UID)}); err != nil {
		return nil, fmt.Errorf("listing the Job's pods: %w", err)
	}
	if len(pods.Items) == 0 {
		return nil, nil
	}
	sort.Slice(pods.Items, func(i, j int) bool {
		return pods.Items[j].CreationTimestamp.Before(&pods.Items[i].CreationTimestamp)
	})
	return &pods.Items[0], nil
}

// patchStatus applies change to a copy of the status and patches it if it changed.
func (r *Reconciler) patchStatus(ctx context.Context, dc *tensorstackv1beta1.DataCube, change func(*tensorstackv1beta1.DataCubeStatus)) error {
	before := dc.DeepCopy()
	change(&dc.Status)
	if equality.Semantic.DeepEqual(before.Status, dc.Status) {
		return nil
	}
	if err := r.client.Status().Patch(ctx, dc, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}

// finished reports whether the DataCube reached Complete or Failed.
func finished(dc *tensorstackv1beta1.DataCube) bool {
	for _, c := range dc.Status.Conditions {
		if (c.Type == tensorstackv1beta1.DataCubeComplete || c.Type == tensorstackv1beta1.DataCubeFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// progressFrom reads the executor's report from a terminated container.
func progressFrom(pod *corev1.Pod) *tensorstackv1beta1.TransferProgress {
	for _, cs := range pod.Status.ContainerStatuses {
		t := cs.State.Terminated
		if t == nil || t.Message == "" {
			continue
		}
		var p executorenv.Progress
		if err := json.Unmarshal([]byte(t.Message), &p); err != nil {
			return nil
		}
		return &tensorstackv1beta1.TransferProgress{
			Bytes: p.Bytes, Files: p.Files, Skipped: p.Skipped, Deleted: p.Deleted,
			Duration: strconv.FormatFloat(p.DurationSeconds, 'f', 3, 64) + "s",
		}
	}
	return nil
}
