package workflow

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
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// Event reasons of the WorkflowRun controller.
const (
	EventStarted      = "Started"
	EventSucceeded    = "Succeeded"
	EventFailed       = "Failed"
	EventError        = "Error"
	EventNodeStarted  = "NodeStarted"
	EventNodeSkipped  = "NodeSkipped"
	EventNodeRetrying = "NodeRetrying"
	EventRetrying     = "Retrying"
	EventTimedOut     = "TimedOut"
)

// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=workflowruns,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=workflowruns/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=workflowtemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=genericjobs;pytorchtrainingjobs;tensorflowtrainingjobs;xgboosttrainingjobs;colossalaijobs;deepspeedjobs;mpijobs;beamjobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
//
// Impersonating the run's ServiceAccount is not a cluster-wide right: the
// Project controller binds it in each Project namespace (ClusterRole
// accelstack-controllers-project).

// Reconciler runs WorkflowRuns.
type Reconciler struct {
	// client writes, and reads WorkflowRuns from the manager's cache.
	client client.Client
	// lookup finds the WorkflowTemplates that runs name.
	lookup TemplateLookup
	// api reads from the API server what the caches lag behind on.
	api client.Reader
	// cache holds the pods and T9k Jobs labelled with a run.
	cache    client.Reader
	scheme   *runtime.Scheme
	recorder events.EventRecorder
	clock    clock.PassiveClock
	// as returns a client acting as a service account, for Resource
	// templates' objects.
	as   func(namespace, serviceAccount string) (client.Client, error)
	opts Options
}

// outcome is where one reconcile leaves the work of a run.
type outcome struct {
	// phase is the run's phase; Running until it ends.
	phase   batchv1beta1.NodePhase
	message string
	// requeue asks to look again after a while (Resource objects of kinds
	// not watched).
	requeue time.Duration
	// results are the run's results, once it has succeeded.
	results []batchv1beta1.WorkflowRunResult
}

func running(message string) outcome {
	return outcome{phase: batchv1beta1.NodeRunning, message: message}
}

// errorOutcome is the outcome of a run that cannot run its work.
func errorOutcome(format string, args ...any) outcome {
	return outcome{phase: batchv1beta1.NodeError, message: fmt.Sprintf(format, args...)}
}

// Reconcile brings one run one step further.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	run := &batchv1beta1.WorkflowRun{}
	if err := r.client.Get(ctx, req.NamespacedName, run); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !run.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if ref := run.Spec.WorkflowTemplateRef; ref != "" && run.Labels[batchv1beta1.WorkflowTemplateLabel] != labelValue(ref) {
		patch := client.MergeFrom(run.DeepCopy())
		if run.Labels == nil {
			run.Labels = map[string]string{}
		}
		run.Labels[batchv1beta1.WorkflowTemplateLabel] = labelValue(ref)
		if err := r.client.Patch(ctx, run, patch); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	orig := run.DeepCopy()
	res, err := r.reconcile(ctx, run)
	if !equality.Semantic.DeepEqual(orig.Status, run.Status) {
		if uerr := r.client.Status().Update(ctx, run); uerr != nil {
			if apierrors.IsConflict(uerr) {
				// The run changed since the cache read it: the change's
				// event reconciles it again.
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, errors.Join(err, fmt.Errorf("updating the status of WorkflowRun %s: %w", req.NamespacedName, uerr))
		}
	}
	if err == nil {
		err = r.deleteHungPod(ctx, run)
	}
	return res, err
}

func (r *Reconciler) reconcile(ctx context.Context, run *batchv1beta1.WorkflowRun) (ctrl.Result, error) {
	st := &run.Status
	if v := run.Annotations[batchv1beta1.RetryAnnotation]; v != "" && v != st.Retry {
		if st.Phase == batchv1beta1.NodeFailed || st.Phase == batchv1beta1.NodeError {
			r.retry(run)
		}
		st.Retry = v
	}
	if st.Phase.Done() {
		return ctrl.Result{}, nil
	}
	now := metav1.NewTime(r.clock.Now())
	if st.StartTime == nil {
		st.StartTime = &now
		st.Phase = batchv1beta1.NodePending
	}
	spec, err := r.resolve(ctx, run)
	if err != nil {
		r.finish(run, errorOutcome("%v", err))
		return ctrl.Result{}, nil
	}
	if st.WorkflowTemplateSpec == nil {
		st.WorkflowTemplateSpec = spec.DeepCopy()
	}
	typ, ferr := TemplateType(spec, nil)
	if ferr != nil {
		r.finish(run, errorOutcome("the WorkflowTemplate is invalid: %v", ferr))
		return ctrl.Result{}, nil
	}
	b, err := bind(run, spec)
	if err != nil {
		r.finish(run, errorOutcome("%v", err))
		return ctrl.Result{}, nil
	}
	if run.Spec.Timeout != nil && run.Spec.Timeout.Duration > 0 {
		deadline := st.StartTime.Add(run.Spec.Timeout.Duration)
		if !r.clock.Now().Before(deadline) {
			r.stop(ctx, run, typ)
			r.recorder.Eventf(run, nil, corev1.EventTypeWarning, EventTimedOut, "Stop", "Timed out after %s", run.Spec.Timeout.Duration)
			r.finish(run, outcome{phase: batchv1beta1.NodeFailed, message: fmt.Sprintf("timed out after %s", run.Spec.Timeout.Duration)})
			return ctrl.Result{}, nil
		}
	}
	if st.Phase == batchv1beta1.NodePending {
		r.recorder.Eventf(run, nil, corev1.EventTypeNormal, EventStarted, "Start", "Running %s template", typ)
	}

	var o outcome
	switch {
	case typ == batchv1beta1.WorkflowTemplateTypePod || typ == batchv1beta1.WorkflowTemplateTypeSeqPod:
		o, err = r.runPod(ctx, run, spec, typ, b)
	case typ == batchv1beta1.WorkflowTemplateTypeDAG:
		o, err = r.runDAG(ctx, run, spec, b)
	default:
		o, err = r.runObject(ctx, run, spec, typ, b)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if o.results != nil {
		run.Status.Results = o.results
	}
	r.finish(run, o)
	res := ctrl.Result{RequeueAfter: o.requeue}
	if run.Spec.Timeout != nil && run.Spec.Timeout.Duration > 0 && !st.Phase.Done() {
		left := st.StartTime.Add(run.Spec.Timeout.Duration).Sub(r.clock.Now())
		if res.RequeueAfter == 0 || left < res.RequeueAfter {
			res.RequeueAfter = left + 10*time.Millisecond
		}
	}
	return res, nil
}

// resolve returns the template the run runs: the copy resolved when it
// started, its embedded template, or the WorkflowTemplate it names.
func (r *Reconciler) resolve(ctx context.Context, run *batchv1beta1.WorkflowRun) (*batchv1beta1.WorkflowTemplateSpec, error) {
	switch {
	case run.Status.WorkflowTemplateSpec != nil:
		return run.Status.WorkflowTemplateSpec.DeepCopy(), nil
	case run.Spec.WorkflowTemplateSpec != nil:
		return run.Spec.WorkflowTemplateSpec.DeepCopy(), nil
	case run.Spec.WorkflowTemplateRef == "":
		return nil, errors.New("spec.workflowTemplateRef or spec.workflowTemplateSpec is required")
	}
	spec, err := r.lookup(ctx, run.Namespace, run.Spec.WorkflowTemplateRef)
	switch {
	case err != nil:
		return nil, fmt.Errorf("getting WorkflowTemplate %s: %w", run.Spec.WorkflowTemplateRef, err)
	case spec == nil:
		return nil, fmt.Errorf("WorkflowTemplate %s not found in namespace %s", run.Spec.WorkflowTemplateRef, run.Namespace)
	}
	return spec.DeepCopy(), nil
}

// finish records o in the run's status: its phase, message and conditions,
// the completion time and an event once it ends.
func (r *Reconciler) finish(run *batchv1beta1.WorkflowRun, o outcome) {
	st := &run.Status
	now := metav1.NewTime(r.clock.Now())
	st.Message = o.message
	if st.Phase == o.phase {
		return
	}
	st.Phase = o.phase
	if !o.phase.Done() {
		setCondition(st, batchv1beta1.WorkflowRunRunning, corev1.ConditionTrue, string(o.phase), o.message, now)
		setCondition(st, batchv1beta1.WorkflowRunCompleted, corev1.ConditionFalse, string(o.phase), "", now)
		return
	}
	st.CompletionTime = &now
	setCondition(st, batchv1beta1.WorkflowRunRunning, corev1.ConditionFalse, string(o.phase), "", now)
	setCondition(st, batchv1beta1.WorkflowRunCompleted, corev1.ConditionTrue, string(o.phase), o.message, now)
	typ, reason := corev1.EventTypeWarning, EventFailed
	switch o.phase {
	case batchv1beta1.NodeSucceeded:
		typ, reason = corev1.EventTypeNormal, EventSucceeded
	case batchv1beta1.NodeError:
		reason = EventError
	}
	r.recorder.Eventf(run, nil, typ, reason, "Finish", "%s", o.message)
}

// setCondition sets a condition of st, keeping its transition time while
// its status stays.
func setCondition(st *batchv1beta1.WorkflowRunStatus, typ batchv1beta1.WorkflowRunConditionType, status corev1.ConditionStatus, reason, message string, now metav1.Time) {
	c := batchv1beta1.WorkflowRunCondition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: now}
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			if st.Conditions[i].Status == status {
				c.LastTransitionTime = st.Conditions[i].LastTransitionTime
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

// retry starts a Failed or Error run again: its state moves to
// retriedStatus; a DAG keeps the nodes that succeeded, with their results,
// and runs the others again.
func (r *Reconciler) retry(run *batchv1beta1.WorkflowRun) {
	st := &run.Status
	st.RetriedStatus = appendRetried(st.RetriedStatus, batchv1beta1.RetriedStatus{
		Phase: st.Phase, Message: st.Message, StartTime: st.StartTime, CompletionTime: st.CompletionTime,
	})
	nodes := map[string]batchv1beta1.NodeStatus{}
	for name, n := range st.Nodes {
		if n.Phase == batchv1beta1.NodeSucceeded {
			nodes[name] = n
		}
	}
	if len(nodes) == 0 {
		nodes = nil
	}
	now := metav1.NewTime(r.clock.Now())
	st.Nodes, st.Phase, st.Message, st.PodName, st.ResourceName = nodes, batchv1beta1.NodeRunning, "retrying", "", ""
	st.StartTime, st.CompletionTime, st.Results = &now, nil, nil
	setCondition(st, batchv1beta1.WorkflowRunRunning, corev1.ConditionTrue, "Retrying", "", now)
	setCondition(st, batchv1beta1.WorkflowRunCompleted, corev1.ConditionFalse, "Retrying", "", now)
	r.recorder.Eventf(run, nil, corev1.EventTypeNormal, EventRetrying, "Retry", "Retrying the run; %d succeeded nodes kept", len(nodes))
}

// maxRetried bounds retriedStatus; the oldest attempts are dropped.
const maxRetried = 100

func appendRetried(list []batchv1beta1.RetriedStatus, s batchv1beta1.RetriedStatus) []batchv1beta1.RetriedStatus {
	list = append(list, s)
	if len(list) > maxRetried {
		list = list[len(list)-maxRetried:]
	}
	return list
}

// attempt numbers the attempts of a run, for the names of what it creates.
func attempt(run *batchv1beta1.WorkflowRun) int {
	n := 0
	for _, s := range run.Status.RetriedStatus {
		if s.Node == "" {
			n++
		}
	}
	return n
}

// stop deletes what a run that timed out still runs: its pod, its object
// or the runs of its DAG's unfinished nodes.
func (r *Reconciler) stop(ctx context.Context, run *batchv1beta1.WorkflowRun, typ batchv1beta1.WorkflowTemplateType) {
	log := ctrl.LoggerFrom(ctx)
	bg := client.PropagationPolicy(metav1.DeletePropagationBackground)
	var victims []client.Object
	switch {
	case run.Status.PodName != "":
		victims = append(victims, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: run.Status.PodName}})
	case typ == batchv1beta1.WorkflowTemplateTypeDAG:
		for name, n := range run.Status.Nodes {
			if n.WorkflowRunName != "" && !n.Phase.Done() {
				victims = append(victims, &batchv1beta1.WorkflowRun{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: n.WorkflowRunName}})
				n.Phase, n.Message = batchv1beta1.NodeFailed, "stopped: the run timed out"
				run.Status.Nodes[name] = n
			}
		}
	case run.Status.ResourceName != "":
		if err := r.deleteObject(ctx, run, typ); err != nil {
			log.Error(err, "Deleting the object of a timed-out run", "object", run.Status.ResourceName)
		}
	}
	for _, o := range victims {
		if err := r.client.Delete(ctx, o, bg); client.IgnoreNotFound(err) != nil {
			log.Error(err, "Deleting what a timed-out run runs", "object", client.ObjectKeyFromObject(o))
		}
	}
}
