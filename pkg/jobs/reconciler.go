package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// Event reasons of the engine.
const (
	EventCreated         = "Created"
	EventRestarting      = "Restarting"
	EventSucceeded       = "Succeeded"
	EventFailed          = "Failed"
	EventPaused          = "Paused"
	EventResumed         = "Resumed"
	EventDeleted         = "Deleted"
	EventCreationFailed  = "CreationFailed"
	EventPodNameTaken    = "PodNameTaken"
	EventUnknownVariable = "UnknownVariable"
)

// ownerIndex indexes the engine's pods and Services by their controlling
// owner's UID.
const ownerIndex = "jobs.tensorstack.dev/owner"

// Reconciler reconciles the jobs of one kind.
type Reconciler struct {
	kind      Kind
	client    client.Client
	apiReader client.Reader // what no cache holds: pods the job does not own, EndpointSlices
	cache     client.Reader
	scheme    *runtime.Scheme
	recorder  events.EventRecorder
	deleted   *deletedPods
	// addressWaits are the replicas held back until their Services drop
	// the addresses of their earlier pods.
	addressWaits *addressWaits
}

// env returns what the kind's hooks may use.
func (r *Reconciler) env() *Env {
	return &Env{Client: r.client, Cache: r.cache, Recorder: r.recorder, Scheme: r.scheme}
}

// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=genericjobs;pytorchtrainingjobs;tensorflowtrainingjobs;xgboosttrainingjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=genericjobs/status;pytorchtrainingjobs/status;tensorflowtrainingjobs/status;xgboosttrainingjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list
// +kubebuilder:rbac:groups=scheduler.tensorstack.dev,resources=podgroups,verbs=get;list;watch;create;update

// staleRetry is how soon a reconcile that met a newer job is retried;
// nameTakenRetry how soon one that found a pod name taken is.
const (
	staleRetry     = 200 * time.Millisecond
	nameTakenRetry = 5 * time.Second
)

// Reconcile brings one job's pods, Services and status in line with its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	if errors.Is(err, errStale) {
		ctrl.LoggerFrom(ctx).V(1).Info("Job changed meanwhile; retrying")
		return ctrl.Result{RequeueAfter: staleRetry}, nil
	}
	return res, err
}

// reconcile is one pass over a job, in steps: load the job and what it
// controls; stop early a job that needs no planning (invalid, oversized,
// finished); stamp its start and enforce its deadline; pause or resume it;
// plan its replicas; record the plan in its status; then act on the plan.
func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p, err := r.load(ctx, req)
	if p == nil {
		return ctrl.Result{}, err
	}
	if stop, err := r.stopEarly(ctx, p); stop {
		return ctrl.Result{}, err
	}
	result, stop, err := r.checkDeadline(ctx, p)
	if stop {
		return ctrl.Result{}, err
	}
	if paused, err := r.pauseOrResume(ctx, p); paused {
		return result, err
	}
	pl, o := r.planReplicas(p)
	if o.Done {
		return ctrl.Result{}, r.finishNow(ctx, p, o)
	}
	if err := r.recordPlan(ctx, p, pl); err != nil {
		return ctrl.Result{}, err
	}
	return r.act(ctx, p, pl, result)
}

// pass is what one reconcile of a job works on: the job as read and as the
// reconcile changes it, the time it stamps, and what it observed of the
// job's pods and Services.
type pass struct {
	// obj is the job, changed by the reconcile; original is the job as read,
	// against which its status is written.
	obj, original client.Object
	// job is the kind's view of obj, with status pointers into obj.
	job *Job
	// now is the time the reconcile's conditions and timestamps carry.
	now metav1.Time
	// pods and services are those the job controls, from the cache.
	pods     []*corev1.Pod
	services []*corev1.Service
	// obs is what planning reads of the pods and the last written status.
	obs observed
}

// load reads the job req names and the pods and Services it controls. It
// decides whether there is anything to reconcile: a job that is gone or
// being deleted gives no pass (nil) and no error.
func (r *Reconciler) load(ctx context.Context, req ctrl.Request) (*pass, error) {
	obj := r.kind.NewObject()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if obj.GetDeletionTimestamp() != nil {
		return nil, nil
	}
	p := &pass{obj: obj}
	p.original = obj.DeepCopyObject().(client.Object)
	p.job = r.kind.View(obj)
	p.now = metav1.Now().Rfc3339Copy()
	pods, services, err := r.children(ctx, obj)
	if err != nil {
		return nil, err
	}
	p.pods, p.services = pods, services
	p.obs = r.observe(p.job, pods)
	return p, nil
}

// observe gathers what planning reads: the job's pods by name, the replica
// entries of its last written status by name, and which pods the engine
// deleted.
func (r *Reconciler) observe(job *Job, pods []*corev1.Pod) observed {
	obs := observed{pods: map[string]*corev1.Pod{}, previous: map[string]batchv1beta1.ReplicaStatus{}, deleted: r.deleted.has}
	for _, p := range pods {
		obs.pods[p.Name] = p
	}
	for _, t := range job.Status.Tasks {
		for _, rs := range t.Replicas {
			obs.previous[rs.Name] = rs
		}
	}
	return obs
}

// stopEarly decides whether the job needs no planning, and if so ends the
// reconcile (true): an invalid job that has not finished is failed as
// invalid first; an oversized job is stopped without its replicas being
// looked at one by one; a finished job only keeps its status and has its
// pods cleaned up (afterFinish).
func (r *Reconciler) stopEarly(ctx context.Context, p *pass) (bool, error) {
	if errs := r.kind.Validate(p.obj, nil); len(errs) > 0 && !Finished(p.job.Status) {
		o := Outcome{Done: true, Reason: ReasonInvalid, Message: "The job is invalid: " + errs.ToAggregate().Error()}
		r.finished(p.obj, p.job, o, p.now)
	}
	if oversized(p.job) {
		return true, r.stopOversized(ctx, p.original, p.job, p.pods, p.now)
	}
	if Finished(p.job.Status) {
		return true, r.afterFinish(ctx, p)
	}
	return false, nil
}

// checkDeadline stamps the job's start time on its first reconcile and
// decides whether it has been active past its deadline: if so the job fails
// and the reconcile ends (true); if not, the result asks for a reconcile
// when the deadline falls.
func (r *Reconciler) checkDeadline(ctx context.Context, p *pass) (ctrl.Result, bool, error) {
	job := p.job
	if job.Status.StartTime == nil {
		now := p.now
		job.Status.StartTime = &now
	}
	var result ctrl.Result
	d := job.ActiveDeadlineSeconds
	if d == nil {
		return result, false, nil
	}
	left := job.Status.StartTime.Add(time.Duration(*d) * time.Second).Sub(p.now.Time)
	if left <= 0 {
		return ctrl.Result{}, true, r.finishNow(ctx, p, Outcome{Done: true, Reason: ReasonDeadline,
			Message: fmt.Sprintf("The job was active longer than its deadline of %d seconds.", *d)})
	}
	result.RequeueAfter = left
	return result, false, nil
}

// pauseOrResume follows the job's run mode. A job asked to pause has its
// pods deleted (pause) and the reconcile ends there (true); a job that was
// paused and is no longer asked to be is marked Resuming, with an event,
// and the reconcile goes on.
func (r *Reconciler) pauseOrResume(ctx context.Context, p *pass) (bool, error) {
	job := p.job
	if job.RunMode != nil && job.RunMode.Pause != nil && job.RunMode.Pause.Enabled {
		// A paused job wants no pods: no quota refuses them.
		clearQuotaRefused(job.Status, p.now)
		return true, r.pause(ctx, p)
	}
	if isTrue(job.Status, batchv1beta1.JobPausedCond) {
		setCondition(job.Status, batchv1beta1.JobPausedCond, corev1.ConditionFalse, reasonResumed, msgResumed, p.now)
		job.Status.Phase = batchv1beta1.JobResuming
		r.recorder.Eventf(p.obj, nil, corev1.EventTypeNormal, EventResumed, "Resume", "Resuming the job")
	}
	return false, nil
}

// children lists the pods and Services job controls, from the cache.
func (r *Reconciler) children(ctx context.Context, obj client.Object) ([]*corev1.Pod, []*corev1.Service, error) {
	var pl corev1.PodList
	if err := r.cache.List(ctx, &pl, client.InNamespace(obj.GetNamespace()), client.MatchingFields{ownerIndex: string(obj.GetUID())}); err != nil {
		return nil, nil, fmt.Errorf("listing pods: %w", err)
	}
	var sl corev1.ServiceList
	if err := r.cache.List(ctx, &sl, client.InNamespace(obj.GetNamespace()), client.MatchingFields{ownerIndex: string(obj.GetUID())}); err != nil {
		return nil, nil, fmt.Errorf("listing Services: %w", err)
	}
	pods := make([]*corev1.Pod, 0, len(pl.Items))
	for i := range pl.Items {
		pods = append(pods, &pl.Items[i])
	}
	services := make([]*corev1.Service, 0, len(sl.Items))
	for i := range sl.Items {
		services = append(services, &sl.Items[i])
	}
	return pods, services, nil
}

// errStale means the job changed since it was read: the reconcile is retried
// on the newer version.
var errStale = errors.New("the job changed since it was read")

// writeStatus writes obj's status if it differs from original's. The write
// carries the version read, so that a decision taken on a stale job is
// retried (errStale) rather than recorded.
func (r *Reconciler) writeStatus(ctx context.Context, original, obj client.Object) error {
	if equality.Semantic.DeepEqual(original, obj) {
		return nil
	}
	if err := r.client.Status().Update(ctx, obj); apierrors.IsConflict(err) {
		return errStale
	} else if err != nil {
		return fmt.Errorf("updating the status of %s: %w", klog.KObj(obj), err)
	}
	return nil
}

// deletePod deletes pod, if it is still the one seen, and remembers it.
// Pods that have ended are deleted at once: nothing runs in them.
func (r *Reconciler) deletePod(ctx context.Context, pod *corev1.Pod) error {
	opts := []client.DeleteOption{client.Preconditions{UID: &pod.UID}}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		opts = append(opts, client.GracePeriodSeconds(0))
	}
	r.deleted.add(pod.UID)
	err := r.client.Delete(ctx, pod, opts...)
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return fmt.Errorf("deleting pod %s: %w", klog.KObj(pod), err)
}
