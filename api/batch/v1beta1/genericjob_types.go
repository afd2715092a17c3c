package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RestartPolicyType says when a GenericJob replica's pod is recreated: Never,
// OnFailure (when it failed) or Always (when it failed or succeeded, until
// the job finishes; use with care, the job may then never end).
// +kubebuilder:validation:Enum=Never;OnFailure;Always
type RestartPolicyType string

// The GenericJob restart policies.
const (
	RestartPolicyNever     RestartPolicyType = "Never"
	RestartPolicyOnFailure RestartPolicyType = "OnFailure"
	RestartPolicyAlways    RestartPolicyType = "Always"
)

// RestartPolicy says when and how often the replicas of one type restart.
type RestartPolicy struct {
	// policy is Never, OnFailure or Always. Defaults to OnFailure. A pod lost
	// with its node, evicted or preempted is recreated whatever the policy.
	// +optional
	// +kubebuilder:default=OnFailure
	Policy RestartPolicyType `json:"policy,omitempty"`
	// limit is the most recreations, all replicas of this type together.
	// Defaults to 0: no recreation.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	Limit int32 `json:"limit,omitempty"`
}

// ReplicaSpec describes the replicas of one type of a GenericJob.
type ReplicaSpec struct {
	// type names the replicas, e.g. master or worker; free-form. Replica pods
	// are named <job>-<type>-<rank>.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Type string `json:"type"`
	// replicas is the number of pods of this type. Defaults to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Replicas *int32 `json:"replicas,omitempty"`
	// restartPolicy says when the pods of this type are recreated, and how
	// often. Defaults to OnFailure with limit 0.
	// +optional
	RestartPolicy *RestartPolicy `json:"restartPolicy,omitempty"`
	// template is the pod template of this type. Its restartPolicy is always
	// Never: the controller recreates pods itself. In the main (first)
	// container's command, args and env values the controller replaces
	// $(type), $(rank), $(replicas[<type>]), $(service.<type>[<rank>].host)
	// and $(service.port[<port name>]); other $(...) are left as written.
	Template corev1.PodTemplateSpec `json:"template"`
}

// FinishRule names, per replica type, the ranks that must all have finished
// (succeeded for a success rule; failed for good for a failure rule) for the
// rule to hold, e.g. {"master": [0], "worker": [0, 1]}.
type FinishRule map[string][]int32

// ServiceOption exposes every replica of a GenericJob under its own DNS name.
type ServiceOption struct {
	// ports are exposed on every replica, through a headless Service named like
	// the replica's pod, <job>-<type>-<rank>.
	// +kubebuilder:validation:MinItems=1
	Ports []corev1.ServicePort `json:"ports"`
}

// GenericJobSpec is the desired state of a GenericJob.
type GenericJobSpec struct {
	// replicaSpecs are the replica types of the job, at least one, each type
	// once.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=type
	ReplicaSpecs []ReplicaSpec `json:"replicaSpecs"`
	// successRules: the job succeeds when every replica named by any one rule
	// has succeeded. Without rules the job succeeds once every replica has.
	// +optional
	SuccessRules []FinishRule `json:"successRules,omitempty"`
	// failureRules: the job fails when every replica named by any one rule has
	// failed and will not be recreated (its policy says no, or its type's
	// limit is used up). Without rules the job fails when any replica does.
	// +optional
	FailureRules []FinishRule `json:"failureRules,omitempty"`
	// service exposes every replica under the DNS name <job>-<type>-<rank>
	// with these ports. Unset means no Service.
	// +optional
	Service *ServiceOption `json:"service,omitempty"`
	// runMode is immediate (unset), debug or pause.
	// +optional
	RunMode *RunMode `json:"runMode,omitempty"`
	// cleanUpPolicy says which pods are deleted when the job finishes: None
	// (the default), All, or Unfinished (those Pending, Running or Unknown).
	// +optional
	// +kubebuilder:default=None
	CleanUpPolicy CleanUpPolicy `json:"cleanUpPolicy,omitempty"`
	// scheduler chooses the scheduler; unset means the default kube-scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
}

// GenericJob runs replicas of free-form types, which find each other through
// variables the controller substitutes, and finishes by success and failure
// rules.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=gj
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="(has(self.spec.runMode) && has(self.spec.runMode.pause) && has(self.spec.runMode.pause.resumeSpecs) ? self.spec.runMode.pause.resumeSpecs : []) == (has(oldSelf.spec.runMode) && has(oldSelf.spec.runMode.pause) && has(oldSelf.spec.runMode.pause.resumeSpecs) ? oldSelf.spec.runMode.pause.resumeSpecs : [])",message="spec.runMode.pause.resumeSpecs cannot be changed after the job is created"
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
