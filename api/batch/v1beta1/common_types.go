package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// MaxReplicas is the most pods one replica count of a job may ask for; the
// +kubebuilder:validation:Maximum=10000 of every such field repeats it.
// Ten thousand pods is more than the largest training jobs run (a few
// thousand nodes) and keeps what the controller works out per job while
// it reconciles it to a few megabytes (a few hundred bytes a replica). The controller also caps the sum
// of a job's replica counts at the same number (jobs.MaxJobPods).
const MaxReplicas = 10000

// SchedulePolicy chooses the scheduler of a job's pods. Unset means the
// default kube-scheduler.
type SchedulePolicy struct {
	// t9kScheduler schedules the job's pods with the T9k Scheduler (schedulerName
	// t9k-scheduler): the controller creates a PodGroup named after the job, in
	// the given queue and with the given priority, before any pod, so that the
	// pods are placed all together or not at all.
	// +optional
	T9kScheduler *T9kScheduler `json:"t9kScheduler,omitempty"`
}

// QueueName is the T9k Scheduler queue s names, "" when s names none (s may
// be nil).
func (s *SchedulePolicy) QueueName() string {
	if s == nil || s.T9kScheduler == nil {
		return ""
	}
	return s.T9kScheduler.Queue
}

// T9kScheduler names the queue and priority of a job under the T9k Scheduler.
type T9kScheduler struct {
	// queue is the Queue the job's PodGroup joins.
	Queue string `json:"queue"`
	// priority orders the job's PodGroup within its queue, 0 to 100; higher
	// goes first. Defaults to 0.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Priority int32 `json:"priority,omitempty"`
}

// RunMode chooses how a job runs. Unset means immediate mode: the pods run
// their commands as soon as they are placed.
type RunMode struct {
	// debug creates the pods with their commands replaced (by default with
	// "sleep inf"), so that you can enter them and start or debug the work by
	// hand. It applies to pods created while it is enabled.
	// +optional
	Debug *DebugMode `json:"debug,omitempty"`
	// pause deletes the job's pods (gracefully) and creates none until it is
	// disabled again; the job is then Paused. Disabling it resumes the job:
	// its pods are created anew, as pause.resumeSpecs says.
	// +optional
	Pause *PauseMode `json:"pause,omitempty"`
}

// DebugMode configures debug mode.
type DebugMode struct {
	// enabled turns debug mode on.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// replicaSpecs sets the debug command per replica type; types not listed
	// run "sleep inf" and keep their init containers.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	ReplicaSpecs []ReplicaDebugSet `json:"replicaSpecs,omitempty"`
}

// ReplicaDebugSet is the debug setting of one replica type.
type ReplicaDebugSet struct {
	// type is the replica type this setting applies to.
	Type string `json:"type"`
	// skipInitContainer leaves the init containers out of the pods.
	// +optional
	SkipInitContainer bool `json:"skipInitContainer,omitempty"`
	// command replaces the command of the replica's main container (its args
	// are dropped). Defaults to ["sleep", "inf"].
	// +optional
	Command []string `json:"command,omitempty"`
}

// PauseMode configures pause mode.
type PauseMode struct {
	// enabled pauses the job.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// resumeSpecs says how the pods of each replica type are created once the
	// job resumes; types not listed run the template's command and args. It
	// cannot be changed after the job is created: set it in advance.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	ResumeSpecs []ResumeSpec `json:"resumeSpecs,omitempty"`
}

// ResumeSpec is the resume setting of one replica type.
type ResumeSpec struct {
	// type is the replica type this setting applies to.
	Type string `json:"type"`
	// skipInitContainer leaves the init containers out of the resumed pods.
	// +optional
	SkipInitContainer bool `json:"skipInitContainer,omitempty"`
	// command replaces the command of the replica's main container on resume.
	// +optional
	Command []string `json:"command,omitempty"`
	// args replaces the args of the replica's main container on resume.
	// +optional
	Args []string `json:"args,omitempty"`
}

// CleanUpPolicy says which pods are deleted once a job finishes: None keeps
// them all (for their logs), All deletes them all, Unfinished deletes those
// still Pending, Running or Unknown.
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
	// replicas is the status of each replica pod, for types of at most 64
	// replicas. Larger types are counted in aggregate instead, so that the
	// status of a job of any size stays within the API server's object size
	// limit.
	// +optional
	Replicas []ReplicaStatus `json:"replicas,omitempty"`
	// aggregate counts the replica pods of this type by phase, in place of
	// replicas, when the type has more than 64 replicas.
	// +optional
	Aggregate *Aggregate `json:"aggregate,omitempty"`
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
	// phase is the coarse state of the job: Pending, Running, Paused,
	// Resuming, Succeeded, Failed or Unknown.
	// +optional
	Phase JobPhase `json:"phase,omitempty"`
	// conditions explain the state of the job: Initialized, Running,
	// ReplicaFailure, Completed, Failed and Paused.
	// +optional
	Conditions []JobCondition `json:"conditions,omitempty"`
	// tasks is the status of the replicas, per replica type.
	// +optional
	Tasks []Tasks `json:"tasks,omitempty"`
	// aggregate counts the replica pods by state.
	// +optional
	Aggregate Aggregate `json:"aggregate,omitempty"`
	// startTime is when the controller first acted on the job;
	// runPolicy.activeDeadlineSeconds counts from it.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the job succeeded or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// TrainingJobStatus is the status of the training jobs, which share one
// restart budget across their replicas.
type TrainingJobStatus struct {
	JobStatus `json:",inline"`
	// backoffCount is the number of replica pods recreated so far, for any
	// reason; the job recreates no more once it reaches
	// runPolicy.backoffLimit.
	// +optional
	BackoffCount int32 `json:"backoffCount,omitempty"`
}

// ReplicaRestartPolicy says when the controller recreates a replica's pod:
// Never; OnFailure (when it failed); Always (when it failed or succeeded,
// until the job finishes); ExitCode (when it failed with a retryable exit
// code: 130, 137, 143 or 138, the last one reserved for programs asking to be
// restarted; any other non-zero code fails the replica at once). A pod lost
// with its node, evicted or preempted is recreated whatever the policy. Every
// recreation counts against runPolicy.backoffLimit.
// +kubebuilder:validation:Enum=Never;OnFailure;Always;ExitCode
type ReplicaRestartPolicy string

// The replica restart policies of the training jobs.
const (
	ReplicaRestartNever     ReplicaRestartPolicy = "Never"
	ReplicaRestartOnFailure ReplicaRestartPolicy = "OnFailure"
	ReplicaRestartAlways    ReplicaRestartPolicy = "Always"
	ReplicaRestartExitCode  ReplicaRestartPolicy = "ExitCode"
)

// RunPolicy governs a training job as a whole: how long it may run, how often
// its pods may be recreated, and what is deleted when it ends.
type RunPolicy struct {
	// activeDeadlineSeconds is how long, counted from status.startTime, the job
	// may run; once exceeded it fails and its pods are cleaned up as
	// cleanUpPolicy says.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	// backoffLimit is the number of pod recreations allowed, shared by all the
	// replicas of the job. Once reached, a replica that fails again is not
	// recreated. Defaults to 3.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
	// cleanUpPolicy says which pods are deleted once the job finishes: None
	// (the default), All, or Unfinished (those Pending, Running or Unknown).
	// +optional
	// +kubebuilder:default=None
	CleanUpPolicy CleanUpPolicy `json:"cleanUpPolicy,omitempty"`
}

// DependentStatus reports an object the job created for you, such as its
// TensorBoard.
type DependentStatus struct {
	// action is the last thing the controller did to the dependent: NOP,
	// Create or Update.
	// +optional
	Action string `json:"action,omitempty"`
	// dependent names the object.
	// +optional
	Dependent *DependentReference `json:"dependent,omitempty"`
	// note says what state the dependent is in, for humans.
	// +optional
	Note string `json:"note,omitempty"`
	// ready is true once the dependent is ready for use.
	// +optional
	Ready bool `json:"ready,omitempty"`
	// reason is a CamelCase word: DependentReady or DependentNotReady.
	// +optional
	Reason string `json:"reason,omitempty"`
	// type is Normal, or Warning when something is wrong.
	// +optional
	Type string `json:"type,omitempty"`
}

// DependentReference names an object a job created.
type DependentReference struct {
	// apiVersion of the object.
	APIVersion string `json:"apiVersion"`
	// kind of the object.
	Kind string `json:"kind"`
	// name of the object.
	Name string `json:"name"`
	// namespace of the object.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// uid of the object.
	// +optional
	UID types.UID `json:"uid,omitempty"`
}
