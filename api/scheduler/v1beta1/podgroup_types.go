package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TopologyPolicyType names a placement policy for the pods of a PodGroup.
type TopologyPolicyType string

// PodGroupSpec describes a gang of pods scheduled together.
type PodGroupSpec struct {
	// minMember is the number of pods that must be schedulable together
	// before any of them is bound.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinMember int32 `json:"minMember,omitempty"`

	// roles sets per-role minimums within the group.
	// +optional
	// +listType=map
	// +listMapKey=name
	Roles []Role `json:"roles,omitempty"`

	// queue is the Queue the group is admitted to.
	// +optional
	// +kubebuilder:default=default
	Queue string `json:"queue,omitempty"`

	// priority orders groups within their queue.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Priority int32 `json:"priority,omitempty"`

	// topologyPolicy is the placement policy for the group's pods.
	// +optional
	TopologyPolicy TopologyPolicyType `json:"topologyPolicy,omitempty"`
}

// Role is a named subset of a PodGroup's pods with its own minimum.
type Role struct {
	// name of the role, matched against the pods' role label.
	Name string `json:"name"`
	// minMember is the least number of pods of this role to schedule together.
	// +kubebuilder:validation:Minimum=0
	MinMember int32 `json:"minMember"`
}

// PodGroupCondition describes one aspect of a PodGroup's state.
type PodGroupCondition struct {
	// type of the condition, e.g. GroupScheduled or SufficientGroupMember.
	Type string `json:"type"`
	// status is True, False or Unknown.
	Status metav1.ConditionStatus `json:"status"`
	// transitionID identifies the scheduling cycle that set the condition.
	// +optional
	TransitionID string `json:"transitionID,omitempty"`
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

// PodGroupStatus is the observed state of a PodGroup.
type PodGroupStatus struct {
	// conditions explain the scheduling state of the group.
	// +optional
	Conditions []PodGroupCondition `json:"conditions,omitempty"`
	// allocated is the sum of requests of the group's bound pods.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`
	// PodCounts counts the group's pods by phase.
	PodCounts `json:",inline"`
}

// PodGroup is a gang of pods that the T9k Scheduler binds all together or not at all.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Queue",type=string,JSONPath=`.spec.queue`
// +kubebuilder:printcolumn:name="MinMember",type=integer,JSONPath=`.spec.minMember`
// +kubebuilder:printcolumn:name="Scheduled",type=string,JSONPath=`.status.conditions[?(@.type=="GroupScheduled")].status`
// +kubebuilder:printcolumn:name="Running",type=integer,JSONPath=`.status.running`
// +kubebuilder:printcolumn:name="Pending",type=integer,JSONPath=`.status.pending`
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=`.spec.priority`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PodGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	// +optional
	Spec PodGroupSpec `json:"spec,omitempty"`
	// status is the observed state.
	// +optional
	Status PodGroupStatus `json:"status,omitempty"`
}

// PodGroupList is a list of PodGroups.
// +kubebuilder:object:root=true
type PodGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PodGroup `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &PodGroup{}, &PodGroupList{})
}
