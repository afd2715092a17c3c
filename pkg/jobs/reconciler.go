package jobs

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
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

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.kind.NewObject()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if obj.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	original := obj.DeepCopyObject().(client.Object)
	job := r.kind.View(obj)
	now := metav1.Now().Rfc3339Copy()

	pods, services, err := r.children(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	obs := observed{pods: map[string]*corev1.Pod{}, previous: map[string]batchv1beta1.ReplicaStatus{}, deleted: r.deleted.has}
	for _, p := range pods {
		obs.pods[p.Name] = p
	}
	for _, t := range job.Status.Tasks {
		for _, rs := range t.Replicas {
			obs.previous[rs.Name] = rs
		}
	}

	if errs := r.kind.Validate(obj, nil); len(errs) > 0 && !Finished(job.Status) {
		o := Outcome{Done: true, Reason: ReasonInvalid, Message: "The job is invalid: " + errs.ToAggregate().Error()}
		r.finished(obj, job, o, now)
	}
	if oversized(job) {
		return ctrl.Result{}, r.stopOversized(ctx, original, job, pods, now)
	}
	if Finished(job.Status) {
		return ctrl.Result{}, r.afterFinish(ctx, original, job, obs, pods)
	}

	if job.Status.StartTime == nil {
		job.Status.StartTime = &now
	}
	var result ctrl.Result
	if d := job.ActiveDeadlineSeconds; d != nil {
		left := job.Status.StartTime.Add(time.Duration(*d) * time.Second).Sub(now.Time)
		if left <= 0 {
			r.finished(obj, job, Outcome{Done: true, Reason: ReasonDeadline,
				Message: fmt.Sprintf("The job was active longer than its deadline of %d seconds.", *d)}, now)
			return ctrl.Result{}, r.afterFinish(ctx, original, job, obs, pods)
		}
		result.RequeueAfter = left
	}

	if job.RunMode != nil && job.RunMode.Pause != nil && job.RunMode.Pause.Enabled {
		// A paused job wants no pods: no quota refuses them.
		clearQuotaRefused(job.Status, now)
		return result, r.pause(ctx, original, job, obs, pods, now)
	}
	if isTrue(job.Status, batchv1beta1.JobPausedCond) {
		setCondition(job.Status, batchv1beta1.JobPausedCond, corev1.ConditionFalse, reasonResumed, msgResumed, now)
		job.Status.Phase = batchv1beta1.JobResuming
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventResumed, "Resume", "Resuming the job")
	}

	b := newBudget(job)
	states := plan(job, obs, b, false)
	if o := r.kind.Outcome(job, states); o.Done {
		r.finished(obj, job, o, now)
		return ctrl.Result{}, r.afterFinish(ctx, original, job, obs, pods)
	}
	progress(job.Status, job, states, now)
	restarting := map[string]bool{}
	for _, rs := range states.All() {
		if rs.restart && rs.Pod != nil {
			restarting[rs.Name] = true
		}
	}
	surplus := surplusPods(job, pods)
	for _, p := range surplus {
		restarting[p.Name] = true
	}
	job.Status.Tasks = buildTasks(job, states, b, restarting, obs)
	job.Status.Aggregate = aggregate(job.Status.Tasks)
	if job.BackoffCount != nil {
		*job.BackoffCount = b.total
	}
	if d, ok := r.kind.(Dependents); ok {
		if err := d.ReconcileDependents(ctx, r.env(), job); err != nil {
			return ctrl.Result{}, err
		}
	}
	if s, ok := r.kind.(StatusReporter); ok {
		s.ReportStatus(job, pods)
	}
	if err := r.writeStatus(ctx, original, obj); err != nil {
		return ctrl.Result{}, err
	}

	// The status records the restarts; now carry them out.
	if err := r.ensureChildren(ctx, job, services); err != nil {
		return ctrl.Result{}, err
	}
	for _, rs := range states.All() {
		if rs.restart {
			r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventRestarting, "RecreatePod",
				"Recreating replica %s, which %s", rs.Name, rs.Detail)
		}
		if (rs.restart || rs.unfinished) && rs.Pod != nil {
			if err := r.deletePod(ctx, rs.Pod); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	for _, p := range surplus {
		if err := r.deletePod(ctx, p); err != nil {
			return ctrl.Result{}, err
		}
	}
	written := obj.DeepCopyObject().(client.Object)
	quota, err := r.createPods(ctx, obj, job, states)
	if qerr := r.recordQuota(ctx, written, obj, job, quota, err); qerr != nil {
		return ctrl.Result{}, errors.Join(err, qerr)
	}
	switch {
	case errors.Is(err, errNameTaken):
		return ctrl.Result{RequeueAfter: nameTakenRetry}, nil
	case errors.Is(err, errStaleAddress):
		return ctrl.Result{RequeueAfter: staleAddressRetry}, nil
	case err != nil:
		return ctrl.Result{}, err
	case len(quota.refused) > 0 && (result.RequeueAfter == 0 || result.RequeueAfter > quotaRetry):
		result.RequeueAfter = quotaRetry
	}
	return result, nil
}

// recordQuota writes into the job's status, written as written, whether a
// ResourceQuota refused some of its pods in this reconcile: ReplicaFailure
// True (ExceededQuota) with the API server's words while it does, False
// again once a reconcile has created every pod it tried to (err nil).
func (r *Reconciler) recordQuota(ctx context.Context, written, obj client.Object, job *Job, quota quotaRefusals, err error) error {
	now := metav1.Now().Rfc3339Copy()
	switch {
	case len(quota.refused) > 0:
		setQuotaRefused(job.Status, quota.refused, quota.wanted, now)
	case err == nil:
		clearQuotaRefused(job.Status, now)
	}
	return r.writeStatus(ctx, written, obj)
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

// surplusPods returns the job's pods that no replica wants: ranks beyond a
// type's count (after scaling down) or types no longer in the spec.
func surplusPods(job *Job, pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		rep := job.Replica(p.Labels[ReplicaTypeLabel])
		rank, err := strconv.Atoi(p.Labels[ReplicaIndexLabel])
		if rep == nil || err != nil || int32(rank) >= rep.Replicas || p.Name != rep.PodName(job.Object.GetName(), int32(rank)) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// finished records outcome o in the job's status, with an event.
func (r *Reconciler) finished(obj client.Object, job *Job, o Outcome, now metav1.Time) {
	finish(job.Status, o, now)
	if o.Succeeded {
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventSucceeded, "Finish", "%s", o.Message)
	} else {
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventFailed, "Finish", "%s", o.Message)
	}
}

// stoppedReasons are the failures the engine imposes rather than the job's
// own end: the job's unfinished pods are deleted whatever its clean-up
// policy, since nothing will tend them any more.
var stoppedReasons = map[string]bool{ReasonDeadline: true, ReasonInvalid: true, ReasonCreationFailed: true}

// afterFinish keeps the status of a finished job and deletes the pods its
// clean-up policy names. A job stopped by the engine (stoppedReasons) loses
// its unfinished pods whatever the policy.
func (r *Reconciler) afterFinish(ctx context.Context, original client.Object, job *Job, obs observed, pods []*corev1.Pod) error {
	b := newBudget(job)
	states := plan(job, obs, b, true)
	policy := job.CleanUpPolicy
	if c := Condition(job.Status, batchv1beta1.JobFailedCond); c != nil && c.Status == corev1.ConditionTrue && stoppedReasons[c.Reason] && policy != batchv1beta1.CleanUpPolicyAll {
		policy = batchv1beta1.CleanUpPolicyUnfinished
	}
	var doomed []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if rs := states.byName[p.Name]; rs != nil && rs.unfinished && rs.Pod == p {
			doomed = append(doomed, p) // a deletion decided before the job finished
			continue
		}
		ended := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		if rep := job.Replica(p.Labels[ReplicaTypeLabel]); rep != nil && rep.KeepOnCleanUp && ended {
			continue
		}
		switch policy {
		case batchv1beta1.CleanUpPolicyAll:
			doomed = append(doomed, p)
		case batchv1beta1.CleanUpPolicyUnfinished:
			if !ended {
				doomed = append(doomed, p)
			}
		}
	}
	deleting := map[string]bool{}
	for _, p := range doomed {
		deleting[p.Name] = true
	}
	job.Status.Tasks = buildTasks(job, states, b, deleting, obs)
	job.Status.Aggregate = aggregate(job.Status.Tasks)
	if job.BackoffCount != nil {
		*job.BackoffCount = b.total
	}
	if d, ok := r.kind.(Dependents); ok {
		if err := d.ReconcileDependents(ctx, r.env(), job); err != nil {
			return err
		}
	}
	if s, ok := r.kind.(StatusReporter); ok {
		s.ReportStatus(job, pods)
	}
	if err := r.writeStatus(ctx, original, job.Object); err != nil {
		return err
	}
	for _, p := range doomed {
		if err := r.deletePod(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// pause deletes the job's pods; the job is Paused once none is left.
func (r *Reconciler) pause(ctx context.Context, original client.Object, job *Job, obs observed, pods []*corev1.Pod, now metav1.Time) error {
	var doomed []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil && !r.deleted.has(p.UID) {
			doomed = append(doomed, p)
		}
	}
	deleting := map[string]bool{}
	for _, p := range pods {
		deleting[p.Name] = true
	}
	b := newBudget(job)
	states := plan(job, obs, b, true)
	job.Status.Tasks = buildTasks(job, states, b, deleting, obs)
	job.Status.Aggregate = aggregate(job.Status.Tasks)
	if !isTrue(job.Status, batchv1beta1.JobPausedCond) {
		// Every pod is deleted or being deleted once this reconcile is done.
		setCondition(job.Status, batchv1beta1.JobPausedCond, corev1.ConditionTrue, reasonPaused, msgPaused, now)
		setCondition(job.Status, batchv1beta1.JobRunningCond, corev1.ConditionFalse, reasonPaused, msgPaused, now)
		job.Status.Phase = batchv1beta1.JobPaused
		r.recorder.Eventf(job.Object, nil, corev1.EventTypeNormal, EventPaused, "Pause", "Pausing the job: deleting %d pods", len(doomed))
	}
	if err := r.writeStatus(ctx, original, job.Object); err != nil {
		return err
	}
	for _, p := range doomed {
		if err := r.deletePod(ctx, p); err != nil {
			return err
		}
	}
	return nil
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
