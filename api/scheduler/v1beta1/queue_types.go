package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// QueueSpec describes a pool of resources that workloads are admitted to.
type QueueSpec struct {
	// quota caps the sum of pod requests admitted to the queue.
	// +optional
	Quota *Quota `json:"quota,omitempty"`

	// priority orders queues: higher is allocated first and may preempt lower.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Priority int32 `json:"priority,omitempty"`

	// preemptible lets other queues preempt this one's pods. Unset means true.
	// +optional
	Preemptible *bool `json:"preemptible,omitempty"`

	// closed stops the queue from accepting new workloads and allocating resources.
	// +optional
	Closed bool `json:"closed,omitempty"`

	// maxDuration deletes pods older than this, e.g. 3w, 2h45m, 1h20m15s. Unset means no limit.
	// +optional
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`
	MaxDuration *string `json:"maxDuration,omitempty"`

	// resourceShapeProfile names a shape profile in ConfigMap t9k-system/resource-shapes.
	// +optional
	ResourceShapeProfile *string `json:"resourceShapeProfile,omitempty"`

	// nodeSelector selects the nodes the queue may use; nil means all nodes.
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`

	// namespaceSelector selects the namespaces allowed to use the queue; nil means none.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

// Quota is the most a queue may hold.
type Quota struct {
	// requests caps the sum of pod requests per resource.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
}

// PodCounts counts pods by phase.
type PodCounts struct {
	// pending pods.
	Pending int32 `json:"pending,omitempty"`
	// running pods.
	Running int32 `json:"running,omitempty"`
	// succeeded pods.
	Succeeded int32 `json:"succeeded,omitempty"`
	// failed pods.
	Failed int32 `json:"failed,omitempty"`
	// unknown pods.
	Unknown int32 `json:"unknown,omitempty"`
}

// PodGroupCounts counts the PodGroups of a queue.
type PodGroupCounts struct {
	// total PodGroups in the queue.
	Total int32 `json:"total,omitempty"`
}

// QueueStatus is the observed state of a Queue.
type QueueStatus struct {
	// allocated is the sum of requests of the pods admitted to the queue.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`
	// conditions explain the state of the queue.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// podGroups counts the queue's PodGroups.
	// +optional
	PodGroups PodGroupCounts `json:"podGroups,omitempty"`
	// pods counts the queue's pods by phase.
	// +optional
	Pods PodCounts `json:"pods,omitempty"`
}

// Queue is a pool of resources with a quota, a priority and permissions,
// created by cluster admins and used by the T9k Scheduler.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="Closed",type=boolean,JSONPath=`.spec.closed`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="PodGroups",type=integer,JSONPath=`.status.podGroups.total`
// +kubebuilder:printcolumn:name="Running",type=integer,JSONPath=`.status.pods.running`
// +kubebuilder:printcolumn:name="Pending",type=integer,JSONPath=`.status.pods.pending`
// +kubebuilder:printcolumn:name="MaxDuration",type=string,JSONPath=`.spec.maxDuration`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Queue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	// +optional
	Spec QueueSpec `json:"spec,omitempty"`
	// status is the observed state.
	// +optional
	Status QueueStatus `json:"status,omitempty"`
}

// QueueList is a list of Queues.
// +kubebuilder:object:root=true
type QueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Queue `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Queue{}, &QueueList{})
}
