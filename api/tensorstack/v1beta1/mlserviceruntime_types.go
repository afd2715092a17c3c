package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RuntimeContainer is the conventional name of a runtime's main container,
// which serves on port 8080.
const RuntimeContainer = "user-container"

// RuntimeTemplate is the pod template of a runtime.
type RuntimeTemplate struct {
	// metadata: the labels and annotations of the pods.
	// +optional
	Metadata ServingPodMeta `json:"metadata,omitempty"`
	// spec of the pods. In the args of its containers, {{.NAME}} is the
	// value of the release's parameter NAME (empty when not set) and
	// {{if .NAME}}A{{else}}B{{end}} is A when it is set and B otherwise, e.g.
	// --models {{if .MODEL_PATH}}{{.MODEL_PATH}}{{else}}all{{end}}. No other
	// action is allowed, and the rendered args are bounded in size.
	Spec corev1.PodSpec `json:"spec"`
}

// MLServiceRuntimeSpec is the desired state of an MLServiceRuntime.
type MLServiceRuntimeSpec struct {
	// enabled lets MLServices use the runtime. Defaults to true.
	// +optional
	// +kubebuilder:default=true
	Enabled *bool `json:"enabled,omitempty"`
	// template of the predictor pods of the MLServices using the runtime.
	Template RuntimeTemplate `json:"template"`
}

// IsEnabled reports whether MLServices may use the runtime.
func (s MLServiceRuntimeSpec) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=mlsrt
// +kubebuilder:printcolumn:name="Enabled",type=boolean,JSONPath=`.spec.enabled`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// MLServiceRuntime is a model server's pod template that MLServices of its
// namespace name in their releases.
type MLServiceRuntime struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MLServiceRuntimeSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// MLServiceRuntimeList is a list of MLServiceRuntimes.
type MLServiceRuntimeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MLServiceRuntime `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &MLServiceRuntime{}, &MLServiceRuntimeList{})
}
