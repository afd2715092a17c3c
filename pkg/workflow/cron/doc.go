// Package cron is the CronWorkflowRun controller: it starts a WorkflowRun
// at each time of a cron schedule, as its concurrency policy and starting
// deadline allow, and keeps its history within limits.
//
// A run is named <CronWorkflowRun>-<Unix seconds of its scheduled time>,
// labelled batch.tensorstack.dev/cronWorkflowRun=<CronWorkflowRun> besides
// the template's labels and annotations, and controlled by the
// CronWorkflowRun. The name makes starting idempotent: a second reconcile
// of the same time, or one after a restart of the controller, finds the run
// instead of starting another.
//
// At each reconcile the controller looks at the scheduled times after
// status.lastScheduleTime (or after the CronWorkflowRun's creation) up to
// now and acts on the latest only, as Kubernetes' CronJob controller does:
// the earlier ones, if any, are reported in an event and never started, so
// a controller that was down starts no burst of runs. The latest is
// recorded as missed (an event, HasFailedRun True with reason
// MissedSchedule) when it is more than startingDeadlineSeconds late;
// skipped (an event) when concurrencyPolicy is Forbid and a run is still
// running; otherwise started, after deleting the running runs when
// concurrencyPolicy is Replace. Whatever happened to it, lastScheduleTime
// moves to it, so that it is not considered again. A suspended
// CronWorkflowRun starts nothing, and its running runs go on; once resumed,
// the latest time that passed meanwhile is due (and missed, with a starting
// deadline it is past).
//
// Finished runs beyond successfulRunsHistoryLimit (phase Succeeded) and
// failedRunsHistoryLimit (Failed or Error) are deleted, oldest scheduled
// time first; unset limits are CronJob's, 3 and 1.
//
// The controller tells the time by an injected clock (Options.Clock) and
// wakes each CronWorkflowRun at its next scheduled time by that clock, so
// that tests and the bench can drive time with a fake one.
//
// Validate and ParseSchedule are what the admission webhook refuses
// CronWorkflowRuns with.
package cron

// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=cronworkflowruns,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=cronworkflowruns/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=cronworkflowruns/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=workflowruns,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
