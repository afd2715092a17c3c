package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// SchedulePolicy chooses the scheduler of a job's pods. Unset means the
// default kube-scheduler.
type SchedulePolicy struct {
	// t9kScheduler schedules the job's pods with the T9k Scheduler through a PodGroup.
	// +optional
	T9kScheduler *T9kScheduler `json:"t9kScheduler,omitempty"`
}

// T9kScheduler names the queue and priority of a job under the T9k Scheduler.
type T9kScheduler struct {
	// queue is the Queue the job's PodGroup joins.
	Queue string `json:"queue"`
	// priority orders the job's PodGroup within its queue.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Priority int32 `json:"priority,omitempty"`
}

// RunMode chooses how a job runs. Unset means immediate mode.
type RunMode struct {
	// debug creates the pods with their commands replaced, for interactive debugging.
	// +optional
	Debug *DebugMode `json:"debug,omitempty"`
	// pause deletes (or does not create) the job's pods until disabled.
	// +optional
	Pause *PauseMode `json:"pause,omitempty"`
}

// DebugMode configures debug mode.
type DebugMode struct {
	// enabled turns debug mode on.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// replicaSpecs overrides the debug command per replica type.
	// +optional
	ReplicaSpecs []ReplicaDebugSet `json:"replicaSpecs,omitempty"`
}

// ReplicaDebugSet is the debug setting of one replica type.
type ReplicaDebugSet struct {
	// type is the replica type.
	Type string `json:"type"`
	// skipInitContainer leaves out the init containers.
	// +optional
	SkipInitContainer bool `json:"skipInitContainer,omitempty"`
	// command replaces the container command; defaults to ["sleep", "inf"].
	// +optional
	Command []string `json:"command,omitempty"`
}

// PauseMode configures pause mode.
type PauseMode struct {
	// enabled pauses the job.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// resumeSpecs says how pods are recreated on resume, per replica type.
	// +optional
	ResumeSpecs []ResumeSpec `json:"resumeSpecs,omitempty"`
}

// ResumeSpec is the resume setting of one replica type.
type ResumeSpec struct {
	// type is the replica type.
	Type string `json:"type"`
	// skipInitContainer leaves out the init containers.
	// +optional
	SkipInitContainer bool `json:"skipInitContainer,omitempty"`
	// command replaces the container command on resume.
	// +optional
	Command []string `json:"command,omitempty"`
	// args replaces the container args on resume.
	// +optional
	Args []string `json:"args,omitempty"`
}

// CleanUpPolicy says which pods are deleted once a job finishes.
// +kubebuilder:validation:Enum=None;All;Unfinished
type CleanUpPolicy string

// The clean-up policies.
const (
	CleanUpPolicyNone       CleanUpPolicy = "None"
	CleanUpPolicyAll        CleanUpPolicy = "All"
	CleanUpPolicyUnfinished CleanUpPolicy = "Unfinished"
)

// JobPhase is the coarse state of a job.
type JobPhase string

// The job phases.
const (
	JobPending   JobPhase = "Pending"
	JobRunning   JobPhase = "Running"
	JobPaused    JobPhase = "Paused"
	JobResuming  JobPhase = "Resuming"
	JobSucceeded JobPhase = "Succeeded"
	JobFailed    JobPhase = "Failed"
	JobUnknown   JobPhase = "Unknown"
)

// JobConditionType names a job condition.
type JobConditionType string

// The job condition types.
const (
	JobInitialized    JobConditionType = "Initialized"
	JobRunningCond    JobConditionType = "Running"
	JobReplicaFailure JobConditionType = "ReplicaFailure"
	JobCompleted      JobConditionType = "Completed"
	JobFailedCond     JobConditionType = "Failed"
	JobPausedCond     JobConditionType = "Paused"
)

// JobCondition describes one aspect of a job's state.
type JobCondition struct {
	// type of the condition.
	Type JobConditionType `json:"type"`
	// status is True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// lastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// reason is a CamelCase word for the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says what happened, for humans.
	// +optional
	Message string `json:"message,omitempty"`
}

// Tasks is the status of the replicas of one type.
type Tasks struct {
	// type is the replica type.
	Type string `json:"type"`
	// restartCount sums the restarts of the replicas of this type.
	// +optional
	RestartCount int32 `json:"restartCount,omitempty"`
	// replicas is the status of each replica pod.
	// +optional
	Replicas []ReplicaStatus `json:"replicas,omitempty"`
}

// ReplicaStatus is the status of one replica pod.
type ReplicaStatus struct {
	// name of the pod.
	Name string `json:"name"`
	// uid of the pod.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// phase of the pod, plus Creating and Deleted.
	// +optional
	Phase string `json:"phase,omitempty"`
	// containers is the state of each container.
	// +optional
	Containers []ContainerStatus `json:"containers,omitempty"`
}

// ContainerStatus is the state of one container of a replica.
type ContainerStatus struct {
	// name of the container.
	Name string `json:"name"`
	// state of the container, e.g. Terminated.
	// +optional
	State string `json:"state,omitempty"`
	// exitCode of the container once terminated.
	// +optional
	ExitCode int32 `json:"exitCode,omitempty"`
}

// Aggregate counts a job's replica pods by state.
type Aggregate struct {
	// creating pods are created but not yet scheduled.
	Creating int32 `json:"creating"`
	// pending pods.
	Pending int32 `json:"pending"`
	// running pods.
	Running int32 `json:"running"`
	// succeeded pods.
	Succeeded int32 `json:"succeeded"`
	// failed pods.
	Failed int32 `json:"failed"`
	// unknown pods.
	Unknown int32 `json:"unknown"`
	// deleted pods.
	Deleted int32 `json:"deleted"`
}

// JobStatus is the status shape shared by the T9k jobs.
type JobStatus struct {
	// phase is the coarse state of the job.
	// +optional
	Phase JobPhase `json:"phase,omitempty"`
	// conditions explain the state of the job.
	// +optional
	Conditions []JobCondition `json:"conditions,omitempty"`
	// tasks is the status of the replicas per type.
	// +optional
	Tasks []Tasks `json:"tasks,omitempty"`
	// aggregate counts the replica pods by state.
	// +optional
	Aggregate Aggregate `json:"aggregate,omitempty"`
}
