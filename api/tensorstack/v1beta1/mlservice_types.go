package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MLServiceRunMode says whether an MLService serves.
// +kubebuilder:validation:Enum=Immediate;Pause
type MLServiceRunMode string

// The run modes.
const (
	// MLServiceImmediate serves (the default).
	MLServiceImmediate MLServiceRunMode = "Immediate"
	// MLServicePause scales every component to zero, keeping the
	// MLService; the Paused condition is True.
	MLServicePause MLServiceRunMode = "Pause"
)

// ModelFormat names the format of a model.
type ModelFormat struct {
	// name of the format, e.g. pytorch.
	Name string `json:"name"`
}

// ModelSpec names the runtime that serves a release's model.
type ModelSpec struct {
	// runtime is the name of an MLServiceRuntime in the namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Runtime string `json:"runtime"`
	// modelFormat of the model; informational.
	// +optional
	ModelFormat *ModelFormat `json:"modelFormat,omitempty"`
	// parameters are substituted for {{.NAME}} in the args of the
	// runtime's containers, e.g. MODEL_PATH.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Parameters map[string]string `json:"parameters,omitempty"`
}

// ContainerResources overrides the resources of a runtime's container.
type ContainerResources struct {
	// name of the container.
	Name string `json:"name"`
	// resources of the container.
	Resources corev1.ResourceRequirements `json:"resources"`
}

// PredictorSpec is how a release serves its model.
// +kubebuilder:validation:XValidation:rule="has(self.model) || has(self.template)",message="a predictor needs a model or a template"
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas"
type PredictorSpec struct {
	// model names the runtime and its parameters.
	// +optional
	Model *ModelSpec `json:"model,omitempty"`
	// storage of the model.
	// +optional
	Storage *ModelStorage `json:"storage,omitempty"`
	// containersResources override the runtime's container resources.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	ContainersResources []ContainerResources `json:"containersResources,omitempty"`
	// minReplicas is the fewest pods; 0 lets the Knative backend scale to
	// zero (the raw backend keeps 1). Defaults to 1.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// maxReplicas is the autoscaler's upper bound. Defaults to
	// minReplicas (at least 1): a fixed number of pods.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	// template is strategic-merge-patched onto the runtime's.
	// +optional
	Template *ServingPodTemplate `json:"template,omitempty"`
	// logger sends the release's requests and responses as CloudEvents.
	// +optional
	Logger *LoggerSpec `json:"logger,omitempty"`
}

// ReleaseSpec is one version of the model.
type ReleaseSpec struct {
	// name of the release, a DNS label.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=30
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// predictor serves the release.
	Predictor PredictorSpec `json:"predictor"`
}

// TransformerSpec pre- and post-processes the requests of every release.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas"
type TransformerSpec struct {
	// minReplicas is the fewest pods. Defaults to 1.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// maxReplicas is the autoscaler's upper bound. Defaults to minReplicas.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	// template of the transformer pods; its first container serves on
	// port 8080 and reaches the predictors at $PREDICTOR_HOST.
	Template ServingPodTemplate `json:"template"`
	// logger sends the transformer's requests and responses as CloudEvents.
	// +optional
	Logger *LoggerSpec `json:"logger,omitempty"`
	// storage mounted or downloaded for the transformer.
	// +optional
	Storage *ModelStorage `json:"storage,omitempty"`
}

// MLServiceSpec is the desired state of an MLService.
// +kubebuilder:validation:XValidation:rule="self.releases.exists(r, r.name == self.default)",message="default must name a release",fieldPath=".default"
// +kubebuilder:validation:XValidation:rule="!has(self.canary) || self.releases.exists(r, r.name == self.canary)",message="canary must name a release",fieldPath=".canary"
// +kubebuilder:validation:XValidation:rule="!has(self.canary) || self.canary != self.default",message="canary must differ from default",fieldPath=".canary"
// +kubebuilder:validation:XValidation:rule="has(self.canary) == has(self.canaryTrafficPercent)",message="canary and canaryTrafficPercent go together",fieldPath=".canaryTrafficPercent"
type MLServiceSpec struct {
	// releases are the versions of the model.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Releases []ReleaseSpec `json:"releases"`
	// transformer processes the requests of the global URL before the
	// predictors.
	// +optional
	Transformer *TransformerSpec `json:"transformer,omitempty"`
	// default is the release that serves the global URL.
	// +kubebuilder:validation:MinLength=1
	Default string `json:"default"`
	// canary is a release that serves canaryTrafficPercent of the global
	// URL's requests.
	// +optional
	Canary string `json:"canary,omitempty"`
	// canaryTrafficPercent of the global URL's requests go to canary,
	// 1 to 99.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=99
	CanaryTrafficPercent *int32 `json:"canaryTrafficPercent,omitempty"`
	// scheduler places the pods with the T9k Scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
	// runMode: Immediate (default) or Pause, which scales every component
	// to zero.
	// +optional
	// +kubebuilder:default=Immediate
	RunMode MLServiceRunMode `json:"runMode,omitempty"`
}

// ReleaseStatus is the state of a release.
type ReleaseStatus struct {
	// name of the release.
	Name string `json:"name"`
	// ready is true while the release serves.
	Ready bool `json:"ready"`
	// trafficPercent of the global URL's requests the release serves.
	TrafficPercent int32 `json:"trafficPercent"`
	// url of the release: http://<mlservice>-predict-<release>.<namespace>.<domain>.
	// +optional
	URL string `json:"url,omitempty"`
	// reason, a CamelCase word, says why a release is not ready.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says, for a person, why a release is not ready.
	// +optional
	Message string `json:"message,omitempty"`
	// readyReplicas counts the release's ready pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// totalReplicas counts all of the release's pods.
	// +optional
	TotalReplicas int32 `json:"totalReplicas,omitempty"`
}

// TransformerStatus is the state of the transformer.
type TransformerStatus struct {
	// ready is true while the transformer serves.
	Ready bool `json:"ready"`
	// url of the transformer.
	// +optional
	URL string `json:"url,omitempty"`
	// reason, a CamelCase word, says why the transformer is not ready.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says, for a person, why the transformer is not ready.
	// +optional
	Message string `json:"message,omitempty"`
	// readyReplicas counts the transformer's ready pods.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// totalReplicas counts all of the transformer's pods.
	// +optional
	TotalReplicas int32 `json:"totalReplicas,omitempty"`
}

// MLServiceAddress is where an MLService is reached.
type MLServiceAddress struct {
	// url is the global URL: http://<name>.<namespace>.<domain>.
	// +optional
	URL string `json:"url,omitempty"`
}

// MLServiceStatus is the observed state of an MLService.
type MLServiceStatus struct {
	// address of the global URL.
	// +optional
	Address *MLServiceAddress `json:"address,omitempty"`
	// defaultRelease serves the global URL's requests that the canary does not.
	// +optional
	DefaultRelease string `json:"defaultRelease,omitempty"`
	// canaryRelease serves its trafficPercent of the global URL's requests.
	// +optional
	CanaryRelease string `json:"canaryRelease,omitempty"`
	// releases, in the order of spec.releases.
	// +optional
	Releases []ReleaseStatus `json:"releases,omitempty"`
	// transformer, when there is one.
	// +optional
	Transformer *TransformerStatus `json:"transformer,omitempty"`
	// backend that runs the releases: raw or knative.
	// +optional
	Backend string `json:"backend,omitempty"`
	// conditions: Ready, Paused.
	// +optional
	Conditions []WorkloadCondition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mls
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Default",type=string,JSONPath=`.status.defaultRelease`
// +kubebuilder:printcolumn:name="Canary",type=string,JSONPath=`.status.canaryRelease`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.address.url`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS label of at most 63 characters starting with a letter, as it names the Service of the global URL"

// MLService serves releases of a model, with canary traffic, autoscaling
// and request logging.
type MLService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MLServiceSpec `json:"spec"`
	// +optional
	Status MLServiceStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// MLServiceList is a list of MLServices.
type MLServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MLService `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &MLService{}, &MLServiceList{})
}
