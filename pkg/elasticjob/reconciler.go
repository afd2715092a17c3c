package elasticjob

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

// Reconciler runs ElasticJobs and executes their ScalePlans.
type Reconciler struct {
	client   client.Client
	reader   client.Reader
	recorder events.EventRecorder
	master   *MasterManager
}

// NewReconciler returns a reconciler that writes through c, reads pods
// through reader (the API server), records events with recorder and gives
// masters without an image masterImage.
func NewReconciler(c client.Client, reader client.Reader, recorder events.EventRecorder, masterImage string) *Reconciler {
	if masterImage == "" {
		masterImage = DefaultMasterImage
	}
	return &Reconciler{client: c, reader: reader, recorder: recorder,
		master: &MasterManager{client: c, reader: reader, image: masterImage}}
}

// task returns the TaskManager of type t.
func (r *Reconciler) task(t elasticv1alpha1.ReplicaType) *TaskManager {
	return &TaskManager{typ: t, client: r.client, reader: r.reader, recorder: r.recorder}
}

// taskTypes are the task types the job has a spec for.
func taskTypes(job *elasticv1alpha1.ElasticJob) []elasticv1alpha1.ReplicaType {
	var out []elasticv1alpha1.ReplicaType
	for _, t := range elasticv1alpha1.TaskTypes {
		if job.Spec.ReplicaSpecs[t] != nil {
			out = append(out, t)
		}
	}
	return out
}

// +kubebuilder:rbac:groups=elastic.iml.github.io,resources=elasticjobs;scaleplans,verbs=get;list;watch
// +kubebuilder:rbac:groups=elastic.iml.github.io,resources=elasticjobs/status;scaleplans/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update

// Reconcile moves an ElasticJob on: it initialises a new job and creates
// its master and first pods, executes its pending ScalePlans, relaunches
// failed pods, derives the phase, and stops the running pods of a finished
// job. The status is written once, at the end.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &elasticv1alpha1.ElasticJob{}
	if err := r.client.Get(ctx, req.NamespacedName, job); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if job.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("elasticJob", klog.KObj(job))
	ctx = ctrl.LoggerInto(ctx, log)
	log.V(2).Info("Reconciling ElasticJob", "phase", job.Status.Phase)

	old := job.Status.DeepCopy()
	err := r.reconcile(ctx, job)
	if !equality.Semantic.DeepEqual(old, &job.Status) {
		now := metav1.Now()
		job.Status.LastReconcileTime = &now
		if uerr := r.client.Status().Update(ctx, job); uerr != nil {
			err = errors.Join(err, fmt.Errorf("updating status: %w", uerr))
		}
	}
	return ctrl.Result{}, err
}

// reconcile does the work of Reconcile on job, changing its status.
func (r *Reconciler) reconcile(ctx context.Context, job *elasticv1alpha1.ElasticJob) error {
	if finished(job) {
		if _, err := r.sync(ctx, job); err != nil {
			return err
		}
		return r.stop(ctx, job)
	}
	if job.Status.Phase == "" {
		if err := r.initialise(ctx, job); err != nil {
			r.recorder.Eventf(job, nil, corev1.EventTypeWarning, "Failed", "Create", "%v", err)
			return err
		}
	}
	if err := r.master.ReconcilePods(ctx, job); err != nil {
		r.recorder.Eventf(job, nil, corev1.EventTypeWarning, "Failed", "Create", "%v", err)
		return err
	}
	if err := r.runPlans(ctx, job); err != nil {
		return err
	}
	exhausted, err := r.handleFaults(ctx, job)
	if err != nil {
		return err
	}
	hasMaster, err := r.sync(ctx, job)
	if err != nil {
		return err
	}
	if exhausted != nil && !hasMaster {
		reason := exhausted.Status.Reason
		if reason == "" {
			reason = ReasonJobFailed
		}
		finish(job, elasticv1alpha1.JobFailed, reason, fmt.Sprintf("job(%s/%s) has failed: pod %s failed after %s restarts, the limit of %s",
			job.Namespace, job.Name, exhausted.Name, exhausted.Labels[elasticv1alpha1.RestartCountLabelKey], exhausted.Labels[elasticv1alpha1.ReplicaTypeLabelKey]))
	}
	if finished(job) {
		r.recorder.Eventf(job, nil, eventType(job), string(job.Status.Phase), "Finish", "%s", condition(job, job.Status.Phase).Message)
		return r.stop(ctx, job)
	}
	return nil
}

// eventType is Warning for a failed job and Normal otherwise.
func eventType(job *elasticv1alpha1.ElasticJob) string {
	if job.Status.Phase == elasticv1alpha1.JobFailed {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}

// initialise marks a new job Created and creates the pods its replica specs
// ask for.
func (r *Reconciler) initialise(ctx context.Context, job *elasticv1alpha1.ElasticJob) error {
	now := metav1.Now()
	job.Status.StartTime = &now
	job.Status.Conditions = []elasticv1alpha1.JobCondition{}
	job.Status.ReplicaStatuses = map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaStatus{}
	for t, s := range job.Spec.ReplicaSpecs {
		if s != nil {
			job.Status.ReplicaStatuses[t] = &elasticv1alpha1.ReplicaStatus{Initial: s.Replicas}
		}
	}
	setCondition(job, elasticv1alpha1.JobCreated, ReasonJobCreated, fmt.Sprintf("ElasticJob %s is created.", job.Name))
	if err := r.master.ReconcilePods(ctx, job); err != nil {
		return err
	}
	view, err := r.view(ctx, job, nil, true)
	if err != nil {
		return err
	}
	for _, t := range taskTypes(job) {
		if err := r.task(t).ReconcilePods(ctx, job, int(job.Spec.ReplicaSpecs[t].Replicas), nil, nil, view); err != nil {
			return err
		}
	}
	return nil
}

// handleFaults relaunches the failed pods of every task type and returns a
// pod whose rank is out of relaunches, or nil.
func (r *Reconciler) handleFaults(ctx context.Context, job *elasticv1alpha1.ElasticJob) (*corev1.Pod, error) {
	view, err := r.view(ctx, job, nil, false)
	if err != nil {
		return nil, err
	}
	for _, t := range taskTypes(job) {
		p, err := r.task(t).HandleFaultPods(ctx, job, view)
		if err != nil || p != nil {
			return p, err
		}
	}
	return nil, nil
}

// sync counts every type's pods into the status and derives the phase:
// from the master pod when the job has one (it reports so), else from the
// chief, or the workers, succeeding, and from any task pod running.
func (r *Reconciler) sync(ctx context.Context, job *elasticv1alpha1.ElasticJob) (bool, error) {
	states := map[elasticv1alpha1.ReplicaType]taskState{}
	running := 0
	for _, t := range taskTypes(job) {
		s, err := r.task(t).SyncJobState(ctx, job)
		if err != nil {
			return false, err
		}
		states[t], running = s, running+s.running
	}
	hasMaster, err := r.master.SyncJobState(ctx, job)
	if err != nil || hasMaster || finished(job) {
		return hasMaster, err
	}
	name := job.Namespace + "/" + job.Name
	decider := elasticv1alpha1.ReplicaTypeWorker
	if job.Spec.ReplicaSpecs[elasticv1alpha1.ReplicaTypeChief] != nil {
		decider = elasticv1alpha1.ReplicaTypeChief
	}
	switch s := states[decider]; {
	case s.ranks > 0 && s.succeeded == s.ranks:
		finish(job, elasticv1alpha1.JobSucceeded, ReasonJobSucceeded, fmt.Sprintf("job(%s) successfully completed", name))
	case running > 0:
		setCondition(job, elasticv1alpha1.JobRunning, ReasonJobRunning, fmt.Sprintf("job(%s) is running.", name))
	default:
		setCondition(job, elasticv1alpha1.JobPending, ReasonJobPending, fmt.Sprintf("job(%s) is pending.", name))
	}
	return false, nil
}

// stop deletes the Pending and Running pods of a finished job, the master's
// included.
func (r *Reconciler) stop(ctx context.Context, job *elasticv1alpha1.ElasticJob) error {
	for _, t := range taskTypes(job) {
		if err := r.task(t).StopRunningPods(ctx, job); err != nil {
			return err
		}
	}
	return r.master.StopRunningPods(ctx, job)
}
