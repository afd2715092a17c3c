package cron

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// Reasons of the conditions and events of a CronWorkflowRun.
const (
	// ReasonRunStarted: a run was started (event), HasStarted is True.
	ReasonRunStarted = "RunStarted"
	// ReasonNoRunStarted: HasStarted is False.
	ReasonNoRunStarted = "NoRunStarted"
	// ReasonRunsActive and ReasonNoRunsActive: IsRunning is True, False.
	ReasonRunsActive   = "RunsActive"
	ReasonNoRunsActive = "NoRunsActive"
	// ReasonRunSucceeded and ReasonNoRunSucceeded: HasSuccessfulRun is
	// True, False.
	ReasonRunSucceeded   = "RunSucceeded"
	ReasonNoRunSucceeded = "NoRunSucceeded"
	// ReasonRunFailed and ReasonNoRunFailed: HasFailedRun is True because a
	// run failed (phase Failed or Error), False.
	ReasonRunFailed   = "RunFailed"
	ReasonNoRunFailed = "NoRunFailed"
	// ReasonMissedSchedule: a scheduled time was not started (event);
	// HasFailedRun is True because one was past startingDeadlineSeconds.
	ReasonMissedSchedule = "MissedSchedule"
	// ReasonRunSkipped: a scheduled time was skipped because a run was
	// still running and concurrencyPolicy is Forbid (event).
	ReasonRunSkipped = "RunSkipped"
	// ReasonRunReplaced: a running run was deleted to start the next one,
	// concurrencyPolicy Replace (event).
	ReasonRunReplaced = "RunReplaced"
	// ReasonRunDeleted: a finished run was deleted, beyond its history
	// limit (event).
	ReasonRunDeleted = "RunDeleted"
	// ReasonRunNameConflict: a WorkflowRun of the run's name exists and is
	// not this CronWorkflowRun's (event); the time counts as missed.
	ReasonRunNameConflict = "RunNameConflict"
	// ReasonFailedCreate: the API server refused the run (event); the time
	// counts as missed.
	ReasonFailedCreate = "FailedCreate"
	// ReasonInvalidSchedule: spec.schedule does not parse (event).
	ReasonInvalidSchedule = "InvalidSchedule"
)

// Condition messages, as the platform prints them.
const (
	MessageHasStarted   = "At least one WorkflowRun has started"
	MessageNotStarted   = "No WorkflowRun has started yet"
	MessageRunning      = "There are running WorkflowRuns"
	MessageNotRunning   = "No WorkflowRun is running"
	MessageSucceeded    = "There are successful WorkflowRuns"
	MessageNotSucceeded = "No successful WorkflowRuns yet"
	MessageFailed       = "There are failed WorkflowRuns"
	MessageNotFailed    = "No failed WorkflowRuns yet"
)

// succeeded reports whether the run ended well.
func succeeded(run *batchv1beta1.WorkflowRun) bool {
	return run.Status.Phase == batchv1beta1.NodeSucceeded
}

// failed reports whether the run ended badly.
func failed(run *batchv1beta1.WorkflowRun) bool {
	return run.Status.Phase == batchv1beta1.NodeFailed || run.Status.Phase == batchv1beta1.NodeError
}

// active reports whether the run still runs: not finished, not being
// deleted.
func active(run *batchv1beta1.WorkflowRun) bool {
	return !run.Status.Phase.Done() && run.DeletionTimestamp.IsZero()
}

// reference is the ObjectReference of a run in status.active.
func reference(run *batchv1beta1.WorkflowRun) corev1.ObjectReference {
	return corev1.ObjectReference{
		APIVersion:      batchv1beta1.GroupVersion.String(),
		Kind:            "WorkflowRun",
		Namespace:       run.Namespace,
		Name:            run.Name,
		UID:             run.UID,
		ResourceVersion: run.ResourceVersion,
	}
}

// observe brings status.active and the conditions up to date with the
// CronWorkflowRun's runs. HasStarted, HasSuccessfulRun and HasFailedRun
// stay True once True, whatever the history limits have deleted since.
func observe(st *batchv1beta1.CronWorkflowRunStatus, runs []*batchv1beta1.WorkflowRun, now time.Time) {
	// A run already listed keeps its reference as first recorded, so that
	// each change of a running run does not rewrite the status.
	known := map[types.UID]corev1.ObjectReference{}
	for _, ref := range st.Active {
		known[ref.UID] = ref
	}
	st.Active = nil
	var anySucceeded, anyFailed bool
	for _, run := range runs {
		switch {
		case active(run):
			ref, ok := known[run.UID]
			if !ok {
				ref = reference(run)
			}
			st.Active = append(st.Active, ref)
		case succeeded(run):
			anySucceeded = true
		case failed(run):
			anyFailed = true
		}
	}
	sort.Slice(st.Active, func(i, j int) bool { return st.Active[i].Name < st.Active[j].Name })

	switch {
	case len(runs) > 0 || isTrue(st, batchv1beta1.CronHasStarted):
		setCondition(st, batchv1beta1.CronHasStarted, corev1.ConditionTrue, ReasonRunStarted, MessageHasStarted, now)
	default:
		setCondition(st, batchv1beta1.CronHasStarted, corev1.ConditionFalse, ReasonNoRunStarted, MessageNotStarted, now)
	}
	if len(st.Active) > 0 {
		setCondition(st, batchv1beta1.CronIsRunning, corev1.ConditionTrue, ReasonRunsActive, MessageRunning, now)
	} else {
		setCondition(st, batchv1beta1.CronIsRunning, corev1.ConditionFalse, ReasonNoRunsActive, MessageNotRunning, now)
	}
	switch {
	case anySucceeded:
		setCondition(st, batchv1beta1.CronHasSuccessfulRun, corev1.ConditionTrue, ReasonRunSucceeded, MessageSucceeded, now)
	case !isTrue(st, batchv1beta1.CronHasSuccessfulRun):
		setCondition(st, batchv1beta1.CronHasSuccessfulRun, corev1.ConditionFalse, ReasonNoRunSucceeded, MessageNotSucceeded, now)
	}
	switch {
	case isTrue(st, batchv1beta1.CronHasFailedRun):
		// Keep the reason: a missed time says more than a generic failure.
	case anyFailed:
		setCondition(st, batchv1beta1.CronHasFailedRun, corev1.ConditionTrue, ReasonRunFailed, MessageFailed, now)
	default:
		setCondition(st, batchv1beta1.CronHasFailedRun, corev1.ConditionFalse, ReasonNoRunFailed, MessageNotFailed, now)
	}
	sortConditions(st)
}

// isTrue reports whether the condition of type t is True.
func isTrue(st *batchv1beta1.CronWorkflowRunStatus, t batchv1beta1.CronWorkflowRunConditionType) bool {
	for _, c := range st.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// setCondition sets the condition of type t, moving its lastTransitionTime
// to now only when its status changes.
func setCondition(st *batchv1beta1.CronWorkflowRunStatus, t batchv1beta1.CronWorkflowRunConditionType,
	status corev1.ConditionStatus, reason, message string, now time.Time) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = metav1.NewTime(now).Rfc3339Copy()
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return
	}
	st.Conditions = append(st.Conditions, batchv1beta1.CronWorkflowRunCondition{
		Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(now).Rfc3339Copy(),
	})
}

// conditionOrder is the order of the conditions in the status, as the
// platform shows them.
var conditionOrder = []batchv1beta1.CronWorkflowRunConditionType{
	batchv1beta1.CronHasStarted, batchv1beta1.CronIsRunning, batchv1beta1.CronHasSuccessfulRun, batchv1beta1.CronHasFailedRun,
}

// sortConditions puts the conditions in conditionOrder, unknown types last.
func sortConditions(st *batchv1beta1.CronWorkflowRunStatus) {
	rank := func(t batchv1beta1.CronWorkflowRunConditionType) int {
		for i, o := range conditionOrder {
			if o == t {
				return i
			}
		}
		return len(conditionOrder)
	}
	sort.SliceStable(st.Conditions, func(i, j int) bool { return rank(st.Conditions[i].Type) < rank(st.Conditions[j].Type) })
}
