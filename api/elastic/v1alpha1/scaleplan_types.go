package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ScaleSpec is the desired change of an ElasticJob.
type ScaleSpec struct {
	// replicaResourceSpecs maps a replica type to the number of its pods
	// that should be alive (Pending, Running or Succeeded) and the resources
	// of the new ones.
	// +optional
	ReplicaResourceSpecs map[ReplicaType]ReplicaResourceSpec `json:"replicaResourceSpecs,omitempty"`

	// createPods are pods to create, with their identity.
	// +optional
	CreatePods []PodMeta `json:"createPods,omitempty"`

	// removePods are pods to delete, by name.
	// +optional
	RemovePods []PodMeta `json:"removePods,omitempty"`

	// migratePods are pods to replace with new resources; DLRover's master
	// reads them and the controller does not.
	// +optional
	MigratePods []PodMeta `json:"migratePods,omitempty"`

	// psHosts are the host:port addresses of every parameter server; they
	// become cluster.ps of TF_CONFIG.
	// +optional
	PsHosts []string `json:"psHosts,omitempty"`

	// ownerJob names the ElasticJob in the same namespace to scale.
	// +optional
	OwnerJob string `json:"ownerJob,omitempty"`
}

// ReplicaResourceSpec is the number and resources of the pods of one type.
type ReplicaResourceSpec struct {
	// replicas is the number of pods that should be alive.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas int `json:"replicas,omitempty"`

	// resource is the requests and limits of containers[0] of new pods.
	// +optional
	Resource corev1.ResourceList `json:"resource,omitempty"`
}

// PodMeta is the identity of one pod.
type PodMeta struct {
	// name of the pod.
	// +optional
	Name string `json:"name,omitempty"`

	// id of the pod; its replica-index label.
	// +optional
	ID int `json:"id,omitempty"`

	// type of the pod.
	// +optional
	Type ReplicaType `json:"type,omitempty"`

	// rankIndex of the pod; its rank-index label and TF task index.
	// +optional
	RankIndex int `json:"rankIndex,omitempty"`

	// service is the host:port of the Service whose endpoint is the pod.
	// +optional
	Service string `json:"service,omitempty"`

	// resource is the requests and limits of containers[0] of the pod.
	// +optional
	Resource corev1.ResourceList `json:"resource,omitempty"`
}

// ScalePlanStatus is the observed state of a ScalePlan.
type ScalePlanStatus struct {
	// createTime is when the controller acknowledged the plan.
	// +optional
	CreateTime *metav1.Time `json:"createTime,omitempty"`

	// finishTime is when the controller finished executing the plan.
	// +optional
	FinishTime *metav1.Time `json:"finishTime,omitempty"`

	// phase is Created, Pending, Scaling, Succeeded or Failed.
	// +optional
	Phase JobConditionType `json:"phase,omitempty"`
}

// ScalePlan asks the controller to scale an ElasticJob: to a number of
// pods per type, or by pods to create and remove.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ScalePlan struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired change.
	// +optional
	Spec ScaleSpec `json:"spec,omitempty"`
	// status is the observed state.
	// +optional
	Status ScalePlanStatus `json:"status,omitempty"`
}

// ScalePlanList is a list of ScalePlans.
// +kubebuilder:object:root=true
type ScalePlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ScalePlan `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &ScalePlan{}, &ScalePlanList{})
}
