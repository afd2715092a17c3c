package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// Labels and annotations users set on an AscendJob.
const (
	// FrameworkLabel names the training framework: pytorch, mindspore or
	// tensorflow. Required.
	FrameworkLabel = "framework"
	// RingControllerLabel names the chip product, e.g. ascend-910b; it marks
	// the job (and its pod templates) for the rank-table pipeline.
	RingControllerLabel = "ring-controller.atlas"
	// TorAffinityLabel selects switch-affinity scheduling:
	// large-model-schema, normal-schema or null.
	TorAffinityLabel = "tor-affinity"
	// FaultRetryTimesLabel is the backoff limit of a job whose
	// runPolicy.backoffLimit is unset.
	FaultRetryTimesLabel = "fault-retry-times"
	// JobIDLabel replaces the job UID in MINDX_TASK_ID.
	JobIDLabel = "jobID"
	// SPBlockAnnotation is the number of chips of a logical super-pod.
	SPBlockAnnotation = "sp-block"
)

// The frameworks.
const (
	FrameworkPyTorch    = "pytorch"
	FrameworkMindSpore  = "mindspore"
	FrameworkTensorFlow = "tensorflow"
)

// SuccessPolicy decides when the job succeeds: "" (every replica) or
// AllWorkers.
type SuccessPolicy string

// The success policies.
const (
	SuccessPolicyDefault    SuccessPolicy = ""
	SuccessPolicyAllWorkers SuccessPolicy = "AllWorkers"
)

// AscendJobSpec is the desired state of an AscendJob.
type AscendJobSpec struct {
	// runPolicy bounds the job's run time and restarts, says what is deleted
	// when it ends, and feeds the gang scheduler.
	// +optional
	RunPolicy RunPolicy `json:"runPolicy,omitempty"`
	// successPolicy is "" or AllWorkers; both mean every replica succeeds.
	// +optional
	SuccessPolicy *SuccessPolicy `json:"successPolicy,omitempty"`
	// schedulerName is the scheduler of the pods whose template names none:
	// volcano, or t9k-scheduler for the T9k Scheduler (with a PodGroup).
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// replicaSpecs are the replica types, by name: Master and Worker for
	// PyTorch, Scheduler and Worker for MindSpore, Chief and Worker for
	// TensorFlow.
	ReplicaSpecs map[ReplicaType]*ReplicaSpec `json:"replicaSpecs"`
}

// LeaderEndpoint is the Service in front of the leading replica.
type LeaderEndpoint struct {
	// service is the Service's name, <job>-<leader type>-0.
	Service string `json:"service"`
	// clusterIP is its address, which the framework variables carry.
	ClusterIP string `json:"clusterIP"`
	// port is its port named ascendjob-port.
	Port int32 `json:"port"`
}

// AscendJobStatus is the observed state of an AscendJob: Kubeflow's job
// status, and the T9k jobs' detail of its replicas.
type AscendJobStatus struct {
	// conditions are Created, Running, Restarting, Succeeded and Failed; the
	// last one changed comes last.
	// +optional
	Conditions []JobCondition `json:"conditions,omitempty"`
	// replicaStatuses count the pods of each replica type.
	// +optional
	ReplicaStatuses map[ReplicaType]*ReplicaStatus `json:"replicaStatuses,omitempty"`
	// startTime is when the controller first acted on the job.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the job succeeded or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// lastReconcileTime is when the status last changed.
	// +optional
	LastReconcileTime *metav1.Time `json:"lastReconcileTime,omitempty"`
	// leader is the Service of the leading replica (Master, Scheduler or
	// Chief), once created.
	// +optional
	Leader *LeaderEndpoint `json:"leader,omitempty"`
	// detail is the job's state as the T9k jobs report theirs: phase,
	// conditions, each replica's pod and the restarts counted.
	// +optional
	Detail batchv1beta1.TrainingJobStatus `json:"detail,omitempty"`
}

// AscendJob runs distributed training on Huawei Ascend NPUs: the controller
// sets each framework's rank, world size and leader address in the
// container named ascend.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=acjob
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[-1:].type`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AscendJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	// +optional
	Spec AscendJobSpec `json:"spec,omitempty"`
	// status is the observed state.
	// +optional
	Status AscendJobStatus `json:"status,omitempty"`
}

// AscendJobList is a list of AscendJobs.
// +kubebuilder:object:root=true
type AscendJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AscendJob `json:"items"`
}
