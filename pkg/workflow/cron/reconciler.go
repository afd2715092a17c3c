package cron

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// Reconciler starts the runs of CronWorkflowRuns at their scheduled times
// and keeps their status and history.
type Reconciler struct {
	client client.Client
	// apiReader lists a CronWorkflowRun's runs from the API server before a
	// Forbid or Replace decision, which a run the cache has not seen yet
	// must not escape.
	apiReader client.Reader
	scheme    *runtime.Scheme
	recorder  events.EventRecorder
	clock     clock.Clock
	wakeups   *wakeups
}

// NewReconciler returns a reconciler telling the time by clk (nil: the
// real clock). c is the manager's client, whose cache holds the
// CronWorkflowRuns and WorkflowRuns; apiReader reads from the API server.
func NewReconciler(c client.Client, apiReader client.Reader, scheme *runtime.Scheme, recorder events.EventRecorder, clk clock.Clock) *Reconciler {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Reconciler{client: c, apiReader: apiReader, scheme: scheme, recorder: recorder, clock: clk, wakeups: newWakeups(clk)}
}

// SetupWithManager registers the reconciler, watching CronWorkflowRuns
// (changes of spec), the WorkflowRuns they own, and the wake-ups at their
// next scheduled times.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.Add(r.wakeups); err != nil {
		return fmt.Errorf("adding the CronWorkflowRun wake-ups: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("cronworkflowrun").
		For(&batchv1beta1.CronWorkflowRun{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&batchv1beta1.WorkflowRun{}).
		WatchesRawSource(source.Channel(r.wakeups.events, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

// Reconcile starts, skips or records as missed the CronWorkflowRun's
// scheduled time that is due, brings its status up to date, deletes the
// finished runs beyond its history limits, and asks to be woken at its
// next scheduled time.
//
// A run is named after its scheduled time, so a second reconcile of the
// same time, by this controller or by one restarted, finds it (the create
// fails with AlreadyExists) rather than starting another. When a time is
// due the CronWorkflowRun is read again from the API server, so that what
// is done is what its latest spec and status say rather than what the
// cache holds. The status is written with the resourceVersion read, so a
// reconcile of a stale copy fails rather than move lastScheduleTime back;
// and it is written before any run is deleted, so that no later reconcile
// sees a deleted run's time as still due.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cwr := &batchv1beta1.CronWorkflowRun{}
	if err := r.client.Get(ctx, req.NamespacedName, cwr); err != nil {
		if apierrors.IsNotFound(err) {
			r.wakeups.cancel(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting CronWorkflowRun %s: %w", req.NamespacedName, err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("cronWorkflowRun", klog.KObj(cwr))
	ctx = ctrl.LoggerInto(ctx, log)
	if !cwr.DeletionTimestamp.IsZero() {
		r.wakeups.cancel(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	now := r.clock.Now()
	log.V(2).Info("Reconciling CronWorkflowRun", "now", now)
	if due(cwr, now) {
		// Act on the API server's copy: a cache that has not seen a change
		// yet (suspend set, a time acted on) must not start a run.
		fresh := &batchv1beta1.CronWorkflowRun{}
		if err := r.apiReader.Get(ctx, req.NamespacedName, fresh); err != nil {
			if apierrors.IsNotFound(err) {
				r.wakeups.cancel(req.NamespacedName)
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, fmt.Errorf("getting CronWorkflowRun %s: %w", req.NamespacedName, err)
		}
		cwr = fresh
		if !cwr.DeletionTimestamp.IsZero() {
			r.wakeups.cancel(req.NamespacedName)
			return ctrl.Result{}, nil
		}
	}

	runs, err := ownedRuns(ctx, r.client, cwr)
	if err != nil {
		return ctrl.Result{}, err
	}
	st := cwr.Status.DeepCopy()
	res, err := r.schedule(ctx, cwr, st, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	runs = slices.DeleteFunc(runs, func(run *batchv1beta1.WorkflowRun) bool { return res.deleted[run.UID] })
	if res.started != nil && find(runs, res.started.Name) == nil {
		runs = append(runs, res.started)
	}
	observe(st, runs, now)
	if !equality.Semantic.DeepEqual(cwr.Status, *st) {
		updated := cwr.DeepCopy()
		updated.Status = *st
		if err := r.client.Status().Update(ctx, updated); err != nil {
			return ctrl.Result{}, fmt.Errorf("updating the status of CronWorkflowRun %s: %w", cwr.Name, err)
		}
	}
	if err := r.pruneHistory(ctx, cwr, runs); err != nil {
		return ctrl.Result{}, err
	}
	if res.next.IsZero() {
		r.wakeups.cancel(req.NamespacedName)
	} else {
		log.V(3).Info("Waiting for the next scheduled time", "next", res.next)
		r.wakeups.at(req.NamespacedName, res.next)
	}
	return ctrl.Result{}, nil
}

// due reports whether a scheduled time of the CronWorkflowRun is due at
// now: one after its lastScheduleTime (or creation), while not suspended.
func due(cwr *batchv1beta1.CronWorkflowRun, now time.Time) bool {
	if cwr.Spec.Suspend {
		return false
	}
	sched, err := ParseSchedule(cwr.Spec.Schedule)
	if err != nil {
		return false
	}
	earliest := cwr.CreationTimestamp.Time
	if cwr.Status.LastScheduleTime != nil {
		earliest = cwr.Status.LastScheduleTime.Time
	}
	return !scheduledTimes(sched, earliest, now).latest.IsZero()
}

// scheduled is what schedule did.
type scheduled struct {
	// started is the run started, or found started by an earlier reconcile.
	started *batchv1beta1.WorkflowRun
	// deleted are the UIDs of the runs deleted to replace them.
	deleted map[types.UID]bool
	// next is the time to wake at; zero for none, as when suspended.
	next time.Time
}

// schedule acts on the latest scheduled time that is due, if any, as the
// spec says: starts its run, or skips it (Forbid), or records it as missed
// (past the starting deadline). It moves st.lastScheduleTime to that time
// once acted on.
func (r *Reconciler) schedule(ctx context.Context, cwr *batchv1beta1.CronWorkflowRun, st *batchv1beta1.CronWorkflowRunStatus,
	now time.Time) (scheduled, error) {
	log := ctrl.LoggerFrom(ctx)
	sched, err := ParseSchedule(cwr.Spec.Schedule)
	if err != nil {
		log.V(1).Info("Invalid schedule: no run is started", "schedule", cwr.Spec.Schedule, "reason", err.Error())
		r.recorder.Eventf(cwr, nil, corev1.EventTypeWarning, ReasonInvalidSchedule, "Schedule",
			"Invalid schedule %q: %v", cwr.Spec.Schedule, err)
		return scheduled{}, nil
	}
	if cwr.Spec.Suspend {
		log.V(3).Info("Suspended: no run is started")
		return scheduled{}, nil
	}
	earliest := cwr.CreationTimestamp.Time
	if st.LastScheduleTime != nil {
		earliest = st.LastScheduleTime.Time
	}
	w := scheduledTimes(sched, earliest, now)
	res := scheduled{next: w.next}
	if w.latest.IsZero() {
		return res, nil
	}
	t := w.latest
	log = log.WithValues("scheduledTime", t.UTC())
	done := func() { st.LastScheduleTime = &metav1.Time{Time: t} }
	if w.passed > 0 {
		passed := fmt.Sprint(w.passed)
		if w.many {
			passed = "More than " + passed
		}
		log.V(1).Info("Scheduled times passed without a run: only the latest is considered", "passed", passed)
		r.recorder.Eventf(cwr, nil, corev1.EventTypeWarning, ReasonMissedSchedule, "Schedule",
			"%s scheduled times before %s were not started: only the latest time due is", passed, stamp(t))
	}
	if d := cwr.Spec.StartingDeadlineSeconds; d != nil && now.Sub(t) > time.Duration(*d)*time.Second {
		msg := fmt.Sprintf("Missed the run of %s: %s late, past startingDeadlineSeconds (%d)", stamp(t), now.Sub(t).Round(time.Second), *d)
		log.V(1).Info("Missed a scheduled time past the starting deadline", "late", now.Sub(t), "startingDeadlineSeconds", *d)
		r.recorder.Eventf(cwr, nil, corev1.EventTypeWarning, ReasonMissedSchedule, "Schedule", "%s", msg)
		setCondition(st, batchv1beta1.CronHasFailedRun, corev1.ConditionTrue, ReasonMissedSchedule, msg, now)
		done()
		return res, nil
	}

	name := RunName(cwr.Name, t)
	if policy := cwr.Spec.ConcurrencyPolicy; policy == batchv1beta1.ForbidConcurrent || policy == batchv1beta1.ReplaceConcurrent {
		current, err := ownedRuns(ctx, r.apiReader, cwr)
		if err != nil {
			return scheduled{}, err
		}
		if run := find(current, name); run != nil {
			done() // started by an earlier reconcile
			res.started = run
			return res, nil
		}
		for _, run := range current {
			if !active(run) {
				continue
			}
			if policy == batchv1beta1.ForbidConcurrent {
				log.V(3).Info("Skipped a scheduled time: a run is still running", "workflowRun", klog.KObj(run))
				r.recorder.Eventf(cwr, run, corev1.EventTypeNormal, ReasonRunSkipped, "Skip",
					"Skipped the run of %s: WorkflowRun %s is still running (concurrencyPolicy Forbid)", stamp(t), run.Name)
				done()
				return res, nil
			}
			deleted, err := r.deleteRun(ctx, run)
			if err != nil {
				return scheduled{}, err
			}
			if res.deleted == nil {
				res.deleted = map[types.UID]bool{}
			}
			res.deleted[run.UID] = true
			if !deleted {
				continue
			}
			log.V(3).Info("Deleted a running run to start the next", "workflowRun", klog.KObj(run))
			r.recorder.Eventf(cwr, run, corev1.EventTypeNormal, ReasonRunReplaced, "Replace",
				"Deleted WorkflowRun %s, still running, to start %s for %s (concurrencyPolicy Replace)", run.Name, name, stamp(t))
		}
	}

	run, err := newRun(cwr, t, r.scheme)
	if err != nil {
		return scheduled{}, err
	}
	err = r.client.Create(ctx, run)
	switch {
	case err == nil:
		log.V(3).Info("Started a run", "workflowRun", klog.KObj(run))
		r.recorder.Eventf(cwr, run, corev1.EventTypeNormal, ReasonRunStarted, "Start", "Started WorkflowRun %s for %s", run.Name, stamp(t))
		done()
		res.started = run
		return res, nil
	case apierrors.IsAlreadyExists(err):
		existing := &batchv1beta1.WorkflowRun{}
		if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(run), existing); err != nil {
			return scheduled{}, fmt.Errorf("getting WorkflowRun %s: %w", run.Name, err)
		}
		if metav1.IsControlledBy(existing, cwr) {
			done() // started by an earlier reconcile
			res.started = existing
			return res, nil
		}
		msg := fmt.Sprintf("Missed the run of %s: WorkflowRun %s exists and is not this CronWorkflowRun's", stamp(t), run.Name)
		log.V(1).Info("Missed a scheduled time: a WorkflowRun of its name exists", "workflowRun", klog.KObj(run))
		r.recorder.Eventf(cwr, nil, corev1.EventTypeWarning, ReasonRunNameConflict, "Start", "%s", msg)
		setCondition(st, batchv1beta1.CronHasFailedRun, corev1.ConditionTrue, ReasonRunNameConflict, msg, now)
		done()
		return res, nil
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		// The template cannot make a run; trying again cannot help.
		msg := fmt.Sprintf("Missed the run of %s: the API server refused WorkflowRun %s: %v", stamp(t), run.Name, err)
		log.Error(err, "The API server refused a run", "workflowRun", klog.KObj(run))
		r.recorder.Eventf(cwr, nil, corev1.EventTypeWarning, ReasonFailedCreate, "Start", "%s", msg)
		setCondition(st, batchv1beta1.CronHasFailedRun, corev1.ConditionTrue, ReasonFailedCreate, msg, now)
		done()
		return res, nil
	default:
		r.recorder.Eventf(cwr, nil, corev1.EventTypeWarning, ReasonFailedCreate, "Start",
			"Creating WorkflowRun %s for %s: %v", run.Name, stamp(t), err)
		return scheduled{}, fmt.Errorf("creating WorkflowRun %s: %w", run.Name, err)
	}
}

// stamp is a scheduled time in messages.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// find returns the run of the name; nil when none.
func find(runs []*batchv1beta1.WorkflowRun, name string) *batchv1beta1.WorkflowRun {
	for _, run := range runs {
		if run.Name == name {
			return run
		}
	}
	return nil
}
