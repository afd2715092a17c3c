package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy says what a CronWorkflowRun does when a run is due while
// an earlier one still runs.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

// The concurrency policies.
const (
	// AllowConcurrent starts the new run beside the running ones.
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ForbidConcurrent skips the new run while one runs.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent deletes the running runs and starts the new one.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// The history limits of a CronWorkflowRun that sets none, CronJob's: enough
// finished runs to see what happened, not every run of a schedule that
// starts one a minute.
const (
	DefaultSuccessfulRunsHistoryLimit int32 = 3
	DefaultFailedRunsHistoryLimit     int32 = 1
)

// CronWorkflowRunSpec starts WorkflowRuns on a schedule.
type CronWorkflowRunSpec struct {
	// schedule in cron format: minute, hour, day of month, month and day of
	// week, e.g. "*/5 1,2,3 * * *"; the controller's time zone (UTC in the
	// default deployment). "@hourly" and the like are accepted too.
	// +kubebuilder:validation:MinLength=1
	Schedule string `json:"schedule"`
	// concurrencyPolicy: Allow (the default), Forbid or Replace.
	// +optional
	// +kubebuilder:default=Allow
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
	// startingDeadlineSeconds: a run not started within this many seconds of
	// its time (the controller was down, say) is not started and counts as
	// failed. Unset means a missed run is started however late; only the
	// latest missed one is.
	// +optional
	// +kubebuilder:validation:Minimum=0
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`
	// suspend stops future runs; running ones go on.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// successfulRunsHistoryLimit is how many succeeded runs are kept: the
	// controller deletes the others, oldest scheduled time first. Unset
	// is 3 (DefaultSuccessfulRunsHistoryLimit), as for a CronJob.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=3
	SuccessfulRunsHistoryLimit *int32 `json:"successfulRunsHistoryLimit,omitempty"`
	// failedRunsHistoryLimit is how many failed runs (phase Failed or
	// Error) are kept: the controller deletes the others, oldest scheduled
	// time first. Unset is 1 (DefaultFailedRunsHistoryLimit), as for a
	// CronJob.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	FailedRunsHistoryLimit *int32 `json:"failedRunsHistoryLimit,omitempty"`
	// workflowRun is the run to start, named <cron>-<unix time of the
	// schedule>.
	WorkflowRun WorkflowRunTemplateSpec `json:"workflowRun"`
}

// WorkflowRunTemplateSpec is the metadata and spec of the runs a
// CronWorkflowRun starts.
type WorkflowRunTemplateSpec struct {
	// metadata: labels and annotations of the runs.
	// +optional
	Metadata metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec of the runs.
	Spec WorkflowRunSpec `json:"spec"`
}

// CronWorkflowRunConditionType names a condition of a CronWorkflowRun.
type CronWorkflowRunConditionType string

// The CronWorkflowRun conditions.
const (
	// CronHasStarted is True once a run has been started.
	CronHasStarted CronWorkflowRunConditionType = "HasStarted"
	// CronIsRunning is True while a run runs.
	CronIsRunning CronWorkflowRunConditionType = "IsRunning"
	// CronHasSuccessfulRun is True once a run has succeeded.
	CronHasSuccessfulRun CronWorkflowRunConditionType = "HasSuccessfulRun"
	// CronHasFailedRun is True once a run has failed or a run was missed.
	CronHasFailedRun CronWorkflowRunConditionType = "HasFailedRun"
)

// CronWorkflowRunCondition is one condition of a CronWorkflowRun.
type CronWorkflowRunCondition struct {
	// type: HasStarted, IsRunning, HasSuccessfulRun or HasFailedRun.
	Type CronWorkflowRunConditionType `json:"type"`
	// status: True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// reason in CamelCase.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message for humans.
	// +optional
	Message string `json:"message,omitempty"`
	// lastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// CronWorkflowRunStatus is the state of a CronWorkflowRun.
type CronWorkflowRunStatus struct {
	// active are the runs that have not finished.
	// +optional
	Active []corev1.ObjectReference `json:"active,omitempty"`
	// lastScheduleTime is the schedule time of the last run started, or of
	// the last time not started: missed past its deadline, or skipped while
	// a run was running (concurrencyPolicy Forbid).
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// conditions: HasStarted, IsRunning, HasSuccessfulRun and HasFailedRun.
	// +optional
	Conditions []CronWorkflowRunCondition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=cwr
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Last Schedule",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// CronWorkflowRun starts a WorkflowRun on a cron schedule.
type CronWorkflowRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec CronWorkflowRunSpec `json:"spec"`
	// +optional
	Status CronWorkflowRunStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// CronWorkflowRunList is a list of CronWorkflowRuns.
type CronWorkflowRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CronWorkflowRun `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &CronWorkflowRun{}, &CronWorkflowRunList{})
}
