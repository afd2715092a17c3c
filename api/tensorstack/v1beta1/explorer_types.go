package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageType is the kind of storage an Explorer browses.
// +kubebuilder:validation:Enum=pvc
type StorageType string

// StorageTypePVC is a PersistentVolumeClaim, StorageShim PVCs included.
const StorageTypePVC StorageType = "pvc"

// ExplorerSpec is the desired state of an Explorer.
type ExplorerSpec struct {
	// storageType: only pvc.
	// +optional
	// +kubebuilder:default=pvc
	StorageType StorageType `json:"storageType,omitempty"`
	// storageName is the PVC, in the Explorer's namespace.
	// +kubebuilder:validation:MinLength=1
	StorageName string `json:"storageName"`
	// suspend deletes the Explorer's pods while true, keeping its Services
	// for when it resumes. Defaults to false.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// scheduler places the pods with the T9k Scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
}

// ResourcePhase is the state of a sub-workload of an Explorer.
type ResourcePhase string

// The sub-workload phases.
const (
	ResourcePending   ResourcePhase = "Pending"
	ResourceRunning   ResourcePhase = "Running"
	ResourceSuspended ResourcePhase = "Suspended"
	ResourceFailed    ResourcePhase = "Failed"
	ResourceUnknown   ResourcePhase = "Unknown"
)

// ResourceStatus is the state of one sub-workload: the file browser or
// code-server.
type ResourceStatus struct {
	// phase of the sub-workload.
	// +optional
	Phase ResourcePhase `json:"phase,omitempty"`
	// pod of the sub-workload.
	// +optional
	Pod *PodStatus `json:"pod,omitempty"`
	// url where it is served.
	// +optional
	URL string `json:"url,omitempty"`
}

// ExplorerStatus is the observed state of an Explorer.
type ExplorerStatus struct {
	// conditions: Idle, Ready.
	// +optional
	Conditions []WorkloadCondition `json:"conditions,omitempty"`
	// codeServer is the state of the code-server sub-workload.
	// +optional
	CodeServer *ResourceStatus `json:"codeServer,omitempty"`
	// fileBrowser is the state of the file browser sub-workload.
	// +optional
	FileBrowser *ResourceStatus `json:"fileBrowser,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Storage",type=string,JSONPath=`.spec.storageName`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Explorer serves a file browser and code-server on a PVC.
type Explorer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ExplorerSpec `json:"spec"`
	// +optional
	Status ExplorerStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ExplorerList is a list of Explorers.
type ExplorerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Explorer `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Explorer{}, &ExplorerList{})
}
