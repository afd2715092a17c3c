package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// Condition is one condition of an EventListener or a WorkflowTrigger.
type Condition struct {
	// type of the condition: Ready.
	Type ConditionType `json:"type"`
	// status: True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// reason in CamelCase.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message for humans.
	// +optional
	Message string `json:"message,omitempty"`
	// lastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// ConditionType names a condition.
type ConditionType string

// ConditionReady is True when the listener or trigger serves events.
const ConditionReady ConditionType = "Ready"

// EventListenerSpec is a listener of JSON POSTs.
type EventListenerSpec struct {
	// replicas is the number of listener pods.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=16
	Replicas *int32 `json:"replicas,omitempty"`
	// resources of the listener container; defaults: requests 100m CPU and
	// 100Mi memory, limits 200m and 200Mi.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// auth, when set, makes the listener take only requests made with a
	// shared secret: signed as GitHub signs webhooks (X-Hub-Signature-256:
	// sha256=<hex HMAC-SHA256 of the body>) or carrying it as GitLab does
	// (X-Gitlab-Token: <secret>). Other requests get 401 and start nothing.
	// +optional
	Auth *EventListenerAuth `json:"auth,omitempty"`
}

// DefaultSecretKey is the key of an EventListener's Secret holding the
// shared secret when auth names none.
const DefaultSecretKey = "token"

// EventListenerAuth names the Secret holding a listener's shared secret. The
// Secret is mounted into the listener's pods as a file: the secret is never
// in their environment, arguments, logs or the listener's status.
type EventListenerAuth struct {
	// secretName names a Secret in the listener's namespace. The listener's
	// pods do not start until it exists.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName"`
	// key of the Secret's data that holds the secret; default "token".
	// Trailing newlines are no part of the secret.
	// +optional
	// +kubebuilder:default=token
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}

// EventListenerAddress is where a listener is reached.
type EventListenerAddress struct {
	// url is the address from outside the cluster, where an ingress routes
	// /t9k/workflow/triggers/<namespace>/<listener> to the listener; empty
	// when the controller knows no external host.
	// +optional
	URL string `json:"url,omitempty"`
	// inClusterURL is the address of the listener's Service.
	// +optional
	InClusterURL string `json:"inClusterURL,omitempty"`
}

// EventListenerStatus is the state of a listener.
type EventListenerStatus struct {
	// address of the listener.
	// +optional
	Address *EventListenerAddress `json:"address,omitempty"`
	// conditions: Ready.
	// +optional
	Conditions []Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.address.inClusterURL`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// EventListener accepts JSON POSTs, turns each into a CloudEvent and hands
// it to the WorkflowTriggers that listen to it.
type EventListener struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec EventListenerSpec `json:"spec,omitempty"`
	// +optional
	Status EventListenerStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// EventListenerList is a list of EventListeners.
type EventListenerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EventListener `json:"items"`
}

// JSONType is the JSON type a filter compares values as.
// +kubebuilder:validation:Enum=bool;number;string
type JSONType string

// The filter types.
const (
	JSONBool   JSONType = "bool"
	JSONNumber JSONType = "number"
	JSONString JSONType = "string"
)

// Filter passes an event whose value at path is one of values.
type Filter struct {
	// path of the value in the event: "body." or "header." and then keys
	// separated by dots, with array indices as keys, '*' and '?' wildcards
	// and '\' escapes, e.g. "body.labels.0.id" or "header.X-Github-Event".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path"`
	// type of the value: bool (values parsed as booleans), number (as
	// floating point numbers) or string.
	Type JSONType `json:"type"`
	// values the value may have.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Values []string `json:"values"`
}

// EventSource is a listener a trigger takes events from, and its filters.
type EventSource struct {
	// eventListenerName names the listener, in the trigger's namespace.
	EventListenerName string `json:"eventListenerName"`
	// filters must all pass for an event to start a run.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Filters []Filter `json:"filters,omitempty"`
}

// WorkflowTriggerSpec starts a WorkflowRun for each event that passes the
// filters of one of its sources.
type WorkflowTriggerSpec struct {
	// replicas is the number of trigger pods.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=16
	Replicas *int32 `json:"replicas,omitempty"`
	// eventSources are the listeners events come from.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	EventSources []EventSource `json:"eventSources"`
	// serviceAccountName is the service account the trigger creates runs
	// as; it needs to create WorkflowRuns in the namespace.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// resources of the trigger container; defaults as the listener's.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// workflowRunSpec is the run to start, named
	// <listener>-<trigger>-<5 hex digits>. Param values may take
	// $(body.<path>) and $(header.<name>) from the event.
	WorkflowRunSpec batchv1beta1.WorkflowRunSpec `json:"workflowRunSpec"`
	// maxLiveRuns bounds the runs of this trigger that have not finished:
	// an event beyond it is answered 429, which the listener retries
	// later. Default 10 (DefaultMaxLiveRuns).
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxLiveRuns *int32 `json:"maxLiveRuns,omitempty"`
	// runsHistoryLimit is how many finished runs of this trigger are kept:
	// the controller deletes the others, those finished first first.
	// Default 10 (DefaultRunsHistoryLimit).
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	RunsHistoryLimit *int32 `json:"runsHistoryLimit,omitempty"`
}

// The bounds on a WorkflowTrigger's runs when its spec sets none (an object
// stored before the CRD defaulted them): enough for the events of a busy
// repository, not a run per request of a flood.
const (
	DefaultMaxLiveRuns      int32 = 10
	DefaultRunsHistoryLimit int32 = 10
)

// WorkflowTriggerStatus is the state of a trigger.
type WorkflowTriggerStatus struct {
	// conditions: Ready.
	// +optional
	Conditions []Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// WorkflowTrigger starts WorkflowRuns on events from EventListeners.
type WorkflowTrigger struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec WorkflowTriggerSpec `json:"spec"`
	// +optional
	Status WorkflowTriggerStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WorkflowTriggerList is a list of WorkflowTriggers.
type WorkflowTriggerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkflowTrigger `json:"items"`
}
