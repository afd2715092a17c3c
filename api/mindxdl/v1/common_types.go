package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The types below have the shape and JSON names of Kubeflow's common job
// API (github.com/kubeflow/common, v0.4), on which AscendJob is built.

// ReplicaType names a replica type: Master, Scheduler, Chief or Worker.
type ReplicaType string

// The replica types.
const (
	ReplicaTypeMaster    ReplicaType = "Master"
	ReplicaTypeScheduler ReplicaType = "Scheduler"
	ReplicaTypeChief     ReplicaType = "Chief"
	ReplicaTypeWorker    ReplicaType = "Worker"
)

// RestartPolicy says when a replica's pod is recreated.
type RestartPolicy string

// The restart policies.
const (
	RestartPolicyAlways    RestartPolicy = "Always"
	RestartPolicyOnFailure RestartPolicy = "OnFailure"
	RestartPolicyNever     RestartPolicy = "Never"
	// RestartPolicyExitCode recreates a failed pod whose container ascend
	// exited with a retryable code (130, 137, 143, 138); other codes fail
	// the job.
	RestartPolicyExitCode RestartPolicy = "ExitCode"
)

// ReplicaSpec describes the replicas of one type.
type ReplicaSpec struct {
	// replicas is the number of pods of this type. Defaults to 1.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// template is the pod template of this type; its container named
	// ascend is the one the controller sets the framework variables in.
	// +optional
	Template corev1.PodTemplateSpec `json:"template,omitempty"`
	// restartPolicy says when a pod of this type is recreated: Never (the
	// default), OnFailure, Always or ExitCode.
	// +optional
	RestartPolicy RestartPolicy `json:"restartPolicy,omitempty"`
}

// CleanPodPolicy says which pods are deleted when the job finishes.
type CleanPodPolicy string

// The clean-pod policies.
const (
	CleanPodPolicyAll     CleanPodPolicy = "All"
	CleanPodPolicyRunning CleanPodPolicy = "Running"
	CleanPodPolicyNone    CleanPodPolicy = "None"
)

// SchedulingPolicy feeds the gang scheduler's PodGroup.
type SchedulingPolicy struct {
	// minAvailable is the least number of pods placed together; defaults to
	// every replica.
	// +optional
	MinAvailable *int32 `json:"minAvailable,omitempty"`
	// queue is the scheduler queue of the job; the T9k Scheduler needs one.
	// +optional
	Queue string `json:"queue,omitempty"`
	// minResources are the resources the gang needs at least.
	// +optional
	MinResources *corev1.ResourceList `json:"minResources,omitempty"`
	// priorityClass is the priority class of the PodGroup.
	// +optional
	PriorityClass string `json:"priorityClass,omitempty"`
	// scheduleTimeoutSeconds bounds the wait for the gang to be placed.
	// +optional
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// RunPolicy bounds the job's run and says what is deleted when it ends.
type RunPolicy struct {
	// cleanPodPolicy says which pods are deleted when the job finishes: All,
	// Running (those not finished) or None (the default).
	// +optional
	CleanPodPolicy *CleanPodPolicy `json:"cleanPodPolicy,omitempty"`
	// ttlSecondsAfterFinished is accepted for compatibility; finished jobs
	// are kept.
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// activeDeadlineSeconds fails the job once it has been active that long.
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	// backoffLimit is the most pod recreations of the job; unset means the
	// label fault-retry-times, and without it no limit.
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
	// schedulingPolicy feeds the gang scheduler.
	// +optional
	SchedulingPolicy *SchedulingPolicy `json:"schedulingPolicy,omitempty"`
}

// JobConditionType names a job condition.
type JobConditionType string

// The job condition types.
const (
	JobCreated    JobConditionType = "Created"
	JobRunning    JobConditionType = "Running"
	JobRestarting JobConditionType = "Restarting"
	JobSucceeded  JobConditionType = "Succeeded"
	JobFailed     JobConditionType = "Failed"
)

// JobCondition is one condition of a job.
type JobCondition struct {
	// type is Created, Running, Restarting, Succeeded or Failed.
	Type JobConditionType `json:"type"`
	// status is True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// reason is a CamelCase reason for the condition's last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says the same for humans.
	// +optional
	Message string `json:"message,omitempty"`
	// lastUpdateTime is when the condition was last set.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`
	// lastTransitionTime is when its status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ReplicaStatus counts the pods of one replica type.
type ReplicaStatus struct {
	// active is the number of pending or running pods.
	// +optional
	Active int32 `json:"active,omitempty"`
	// succeeded is the number of pods that succeeded.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// failed is the number of pods that failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// labelSelector selects the pods of the type.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}
