package beamjob

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// Component is the BeamJob's label name.
const Component = "beamjob"

// ReasonFlinkOperatorMissing is the reason of the ClusterRunning condition,
// and of the Warning event, of a BeamJob on a cluster without the
// FlinkCluster API.
const ReasonFlinkOperatorMissing = "FlinkOperatorMissing"

// errFlinkOperatorMissing means the FlinkCluster API is not installed.
var errFlinkOperatorMissing = errors.New("the FlinkCluster API (CRD " + FlinkClusterCRD + ") is not installed")

// pollInterval is how often a running BeamJob is looked at again for the
// ID of its Flink job, which no watch reports, and how often any unfinished
// one is where the FlinkCluster API is not watched.
const pollInterval = 10 * time.Second

// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=beamjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=beamjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=flinkoperator.k8s.io,resources=flinkclusters,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// Reconciler reconciles BeamJobs.
type Reconciler struct {
	client client.Client
	// reader reads FlinkClusters, Jobs and pods from the API server: a
	// submitter Job just created is seen at once, so never made twice.
	reader   client.Reader
	recorder events.EventRecorder
	jobIDs   jobIDReader
	// watchesClusters is set when FlinkClusters are watched; else
	// unfinished jobs are polled.
	watchesClusters bool
}

// Reconcile creates the job's FlinkCluster, then its submitter Job once the
// cluster runs, and writes the status; a finished job's cluster is deleted
// when runPolicy.cleanUpCluster says so.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	bj := &batchv1beta1.BeamJob{}
	if err := r.client.Get(ctx, req.NamespacedName, bj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if bj.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	original := bj.DeepCopy()
	now := metav1.Now().Rfc3339Copy()
	s := &bj.Status
	if s.StartTime == nil {
		s.StartTime = &now
	}
	if s.Phase == "" {
		s.Phase = batchv1beta1.BeamJobInitializing
	}
	res, err := r.sync(ctx, bj, now)
	if err != nil && !finished(s.Phase) {
		s.Phase = batchv1beta1.BeamJobUnknown
		r.recorder.Eventf(bj, nil, corev1.EventTypeWarning, "ReconcileFailed", "Reconcile", "%v", err)
	}
	if !equality.Semantic.DeepEqual(original.Status, bj.Status) {
		if uerr := r.client.Status().Update(ctx, bj); uerr != nil {
			return ctrl.Result{}, fmt.Errorf("updating the status of %s: %w", bj.Name, uerr)
		}
	}
	return res, err
}

func (r *Reconciler) sync(ctx context.Context, bj *batchv1beta1.BeamJob, now metav1.Time) (ctrl.Result, error) {
	s := &bj.Status
	done := finished(s.Phase)
	fc, err := r.cluster(ctx, bj, !done)
	if errors.Is(err, errFlinkOperatorMissing) {
		r.operatorMissing(bj, now)
		return ctrl.Result{RequeueAfter: pollInterval}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	state := clusterState(fc)
	jm, tm, err := r.clusterPods(ctx, bj)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.FlinkClusterStatus = batchv1beta1.FlinkClusterStatus{JobManagerStatus: jm, TaskManagerStatus: tm}
	setCondition(s, clusterCondition(fc != nil, state), now)

	job, err := r.submitter(ctx, bj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if job == nil && state == ClusterStateRunning && !done {
		if job, err = r.createSubmitter(ctx, bj); err != nil {
			return ctrl.Result{}, err
		}
	}
	var pods []corev1.Pod
	if job != nil {
		var list corev1.PodList
		if err := r.reader.List(ctx, &list, client.InNamespace(bj.Namespace), client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}); err != nil {
			return ctrl.Result{}, fmt.Errorf("listing the pods of Job %s: %w", job.Name, err)
		}
		pods = list.Items
		s.JobStatus = podStatuses(pods)
	}
	setCondition(s, jobCondition(job, pods), now)
	if job != nil && !done && fc != nil {
		r.updateJobURL(ctx, bj)
	}
	if !done {
		phase := nextPhase(job)
		if phase != s.Phase {
			ctrl.LoggerFrom(ctx).V(2).Info("BeamJob phase", "from", s.Phase, "to", phase)
		}
		s.Phase = phase
		if finished(phase) {
			s.CompletionTime = &now
			r.recorder.Eventf(bj, nil, corev1.EventTypeNormal, string(phase), "Finish", "The submitter Job %s %s", job.Name, phase)
		}
	}
	if finished(s.Phase) {
		return ctrl.Result{}, r.cleanUp(ctx, bj, fc)
	}
	if !r.watchesClusters || s.Phase == batchv1beta1.BeamJobRunning {
		return ctrl.Result{RequeueAfter: pollInterval}, nil
	}
	return ctrl.Result{}, nil
}

// operatorMissing records that the cluster lacks the FlinkCluster API: the
// ClusterRunning condition says so (FlinkOperatorMissing), with a Warning
// event when it starts to. A job not yet running stays Initializing, and
// is looked at again every pollInterval, until flink-operator is
// installed; one that was running is Unknown.
func (r *Reconciler) operatorMissing(bj *batchv1beta1.BeamJob, now metav1.Time) {
	s := &bj.Status
	msg := "The FlinkCluster API (CRD " + FlinkClusterCRD + ") is not installed: the job waits until flink-operator is installed."
	if c := condition(s, batchv1beta1.BeamClusterRunning); c == nil || c.Reason != ReasonFlinkOperatorMissing {
		r.recorder.Eventf(bj, nil, corev1.EventTypeWarning, ReasonFlinkOperatorMissing, "CreateCluster", "%s", msg)
	}
	setCondition(s, batchv1beta1.JobCondition{Type: batchv1beta1.BeamClusterRunning, Status: corev1.ConditionFalse,
		Reason: ReasonFlinkOperatorMissing, Message: msg}, now)
	if !finished(s.Phase) && s.Phase != batchv1beta1.BeamJobInitializing {
		s.Phase = batchv1beta1.BeamJobUnknown
	}
}

// updateJobURL points the status at the Flink job the cluster runs, once
// its job manager names one; a failed lookup is tried again later.
func (r *Reconciler) updateJobURL(ctx context.Context, bj *batchv1beta1.BeamJob) {
	cluster := ClusterName(bj.Name)
	id, err := r.jobIDs.JobID(ctx, bj.Namespace, cluster)
	if err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("No Flink job ID yet", "cluster", cluster, "err", err.Error())
		return
	}
	if id != "" {
		bj.Status.JobURL = JobURL(bj.Namespace, cluster, id)
	}
}

// cleanUp deletes the finished job's FlinkCluster when
// runPolicy.cleanUpCluster asks for it.
func (r *Reconciler) cleanUp(ctx context.Context, bj *batchv1beta1.BeamJob, fc *unstructured.Unstructured) error {
	if !bj.Spec.RunPolicy.CleanUpCluster || fc == nil || fc.GetDeletionTimestamp() != nil {
		return nil
	}
	if err := r.client.Delete(ctx, fc, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting FlinkCluster %s: %w", fc.GetName(), err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted the Flink cluster", "cluster", fc.GetName())
	r.recorder.Eventf(bj, nil, corev1.EventTypeNormal, "ClusterDeleted", "CleanUp", "Deleted FlinkCluster %s", fc.GetName())
	return nil
}

// cluster returns the job's FlinkCluster, creating it when create is set.
func (r *Reconciler) cluster(ctx context.Context, bj *batchv1beta1.BeamJob, create bool) (*unstructured.Unstructured, error) {
	fc := newClusterObject()
	err := r.reader.Get(ctx, client.ObjectKey{Namespace: bj.Namespace, Name: ClusterName(bj.Name)}, fc)
	switch {
	case err == nil:
		if !metav1.IsControlledBy(fc, bj) {
			return nil, fmt.Errorf("FlinkCluster %s belongs to another object", fc.GetName())
		}
		return fc, nil
	case meta.IsNoMatchError(err):
		return nil, fmt.Errorf("%w: %w", errFlinkOperatorMissing, err)
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("getting FlinkCluster %s: %w", ClusterName(bj.Name), err)
	case !create:
		return nil, nil
	}
	fc, err = newFlinkCluster(bj)
	if err != nil {
		return nil, err
	}
	if err := r.own(bj, fc); err != nil {
		return nil, err
	}
	if err := r.client.Create(ctx, fc); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating FlinkCluster %s: %w", fc.GetName(), err)
	}
	ctrl.LoggerFrom(ctx).Info("Created the Flink cluster", "cluster", fc.GetName())
	r.recorder.Eventf(bj, nil, corev1.EventTypeNormal, "ClusterCreated", "Create", "Created FlinkCluster %s", fc.GetName())
	return fc, nil
}

// clusterPods returns the phases of the cluster's job manager and task
// manager pods.
func (r *Reconciler) clusterPods(ctx context.Context, bj *batchv1beta1.BeamJob) (jm, tm []batchv1beta1.PodStatus, err error) {
	var list corev1.PodList
	if err := r.reader.List(ctx, &list, client.InNamespace(bj.Namespace),
		client.MatchingLabels{flinkAppLabel: flinkAppValue, flinkClusterLabel: ClusterName(bj.Name)}); err != nil {
		return nil, nil, fmt.Errorf("listing the Flink cluster's pods: %w", err)
	}
	var jms, tms []corev1.Pod
	for _, p := range list.Items {
		switch p.Labels[flinkComponentLabel] {
		case componentJobManager:
			jms = append(jms, p)
		case componentTaskManager:
			tms = append(tms, p)
		}
	}
	return podStatuses(jms), podStatuses(tms), nil
}

// submitter returns the job's submitter Job, or nil.
func (r *Reconciler) submitter(ctx context.Context, bj *batchv1beta1.BeamJob) (*batchv1.Job, error) {
	var list batchv1.JobList
	if err := r.reader.List(ctx, &list, client.InNamespace(bj.Namespace), client.MatchingLabels{jobs.JobNameLabel: bj.Name, jobs.ComponentLabel: Component}); err != nil {
		return nil, fmt.Errorf("listing the submitter Jobs: %w", err)
	}
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], bj) {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// createSubmitter creates the Job of spec.jobTemplate, <job>-batchjob-<random>.
func (r *Reconciler) createSubmitter(ctx context.Context, bj *batchv1beta1.BeamJob) (*batchv1.Job, error) {
	job, err := newSubmitter(bj)
	if err != nil {
		return nil, err
	}
	if err := r.own(bj, job); err != nil {
		return nil, err
	}
	if err := r.client.Create(ctx, job); err != nil {
		return nil, fmt.Errorf("creating the submitter Job: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("Created the submitter Job", "submitter", job.Name)
	r.recorder.Eventf(bj, nil, corev1.EventTypeNormal, "JobCreated", "Create", "Created Job %s", job.Name)
	return job, nil
}

// own makes bj the controlling owner of o.
func (r *Reconciler) own(bj *batchv1beta1.BeamJob, o client.Object) error {
	gvk, err := apiutil.GVKForObject(bj, r.client.Scheme())
	if err != nil {
		return fmt.Errorf("finding the BeamJob's kind: %w", err)
	}
	o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: bj.Name, UID: bj.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}})
	return nil
}
