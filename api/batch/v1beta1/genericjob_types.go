package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RestartPolicyType says when a GenericJob replica is restarted.
// +kubebuilder:validation:Enum=Never;OnFailure;Always
type RestartPolicyType string

// RestartPolicy says when and how often the replicas of one type restart.
type RestartPolicy struct {
	// policy is Never, OnFailure or Always.
	// +optional
	// +kubebuilder:default=OnFailure
	Policy RestartPolicyType `json:"policy,omitempty"`
	// limit is the most restarts for the replicas of this type.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	Limit int32 `json:"limit,omitempty"`
}

// ReplicaSpec describes the replicas of one type.
type ReplicaSpec struct {
	// type names the replicas, e.g. master or worker; free-form.
	// +kubebuilder:validation:MinLength=1
	Type string `json:"type"`
	// replicas is the number of pods of this type.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`
	// restartPolicy says when the pods of this type restart.
	// +optional
	RestartPolicy *RestartPolicy `json:"restartPolicy,omitempty"`
	// template is the pod template of this type.
	Template corev1.PodTemplateSpec `json:"template"`
}

// FinishRule maps a replica type to the ranks that must all finish for the rule to hold.
type FinishRule map[string][]int32

// ServiceOption exposes every replica of a GenericJob under its own DNS name.
type ServiceOption struct {
	// ports are exposed on every replica.
	Ports []corev1.ServicePort `json:"ports"`
}

// GenericJobSpec is the desired state of a GenericJob.
type GenericJobSpec struct {
	// replicaSpecs are the replica types of the job.
	// +kubebuilder:validation:MinItems=1
	// +listType=map
	// +listMapKey=type
	ReplicaSpecs []ReplicaSpec `json:"replicaSpecs"`
	// successRules: the job succeeds when all replicas listed in any rule completed.
	// +optional
	SuccessRules []FinishRule `json:"successRules,omitempty"`
	// failureRules: the job fails when all replicas listed in any rule failed.
	// +optional
	FailureRules []FinishRule `json:"failureRules,omitempty"`
	// service exposes the replicas; unset means no Service.
	// +optional
	Service *ServiceOption `json:"service,omitempty"`
	// runMode is immediate (unset), debug or pause.
	// +optional
	RunMode *RunMode `json:"runMode,omitempty"`
	// cleanUpPolicy says which pods are deleted when the job finishes.
	// +optional
	// +kubebuilder:default=None
	CleanUpPolicy CleanUpPolicy `json:"cleanUpPolicy,omitempty"`
	// scheduler chooses the scheduler; unset means the default kube-scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
}

// GenericJob runs replicas of free-form types with success and failure rules.
//
// accelstack serves this API but no controller reconciles it yet: a
// GenericJob is stored and validated, and no pod is created for it.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=gj
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type GenericJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	Spec GenericJobSpec `json:"spec"`
	// status is the observed state.
	// +optional
	Status JobStatus `json:"status,omitempty"`
}

// GenericJobList is a list of GenericJobs.
// +kubebuilder:object:root=true
type GenericJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GenericJob `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &GenericJob{}, &GenericJobList{})
}
