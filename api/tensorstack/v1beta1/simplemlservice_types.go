package v1beta1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SimpleMLServiceContainer is the name of the server container a
// SimpleMLService runs TF Serving or TorchServe in.
const SimpleMLServiceContainer = "server"

// The condition types of SimpleMLService and MLService.
const (
	// ConditionModelDownloaded is True once the model is mounted or
	// downloaded; its message holds a failed download's error.
	ConditionModelDownloaded = "ModelDownloaded"
	// ConditionPaused is True while an MLService's runMode is Pause.
	ConditionPaused = "Paused"
)

// TensorFlowServer runs TF Serving on the model.
type TensorFlowServer struct {
	// image of TF Serving, e.g. t9kpublic/tensorflow-serving:2.6.0.
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`
	// resources of the server container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// PyTorchServer runs TorchServe on the model store.
type PyTorchServer struct {
	// image of TorchServe, e.g. t9kpublic/pytorch-serve:0.4.1-cpu.
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`
	// modelsFlag is the value of torchserve --models: space-separated
	// models, e.g. mnist=mnist.mar.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_.=,/:+][A-Za-z0-9_.=,/:+-]*( +[A-Za-z0-9_.=,/:+][A-Za-z0-9_.=,/:+-]*)*$')",message="must be space-separated models such as mnist=mnist.mar"
	ModelsFlag string `json:"modelsFlag,omitempty"`
	// resources of the server container.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// CustomServer runs a pod of the user's.
type CustomServer struct {
	// spec of the server pod; its first container serves on port 8080
	// unless spec.service says otherwise.
	Spec corev1.PodSpec `json:"spec"`
}

// ServiceOption is the Service of a SimpleMLService.
type ServiceOption struct {
	// ports of the Service. Defaults to port 80 to the pod's port 8080/TCP.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Ports []corev1.ServicePort `json:"ports,omitempty"`
	// type of the Service: ClusterIP (default) or NodePort.
	// +optional
	// +kubebuilder:validation:Enum=ClusterIP;NodePort
	Type corev1.ServiceType `json:"type,omitempty"`
}

// SimpleMLServiceSpec is the desired state of a SimpleMLService.
// +kubebuilder:validation:XValidation:rule="(has(self.tensorflow) ? 1 : 0) + (has(self.pytorch) ? 1 : 0) + (has(self.custom) ? 1 : 0) == 1",message="exactly one of tensorflow, pytorch or custom"
// +kubebuilder:validation:XValidation:rule="has(self.custom) || has(self.storage)",message="tensorflow and pytorch need storage"
type SimpleMLServiceSpec struct {
	// replicas of the server. Defaults to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`
	// strategy replaces old pods by new ones.
	// +optional
	Strategy *appsv1.DeploymentStrategy `json:"strategy,omitempty"`
	// scheduler places the pods with the T9k Scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
	// storage of the model.
	// +optional
	Storage *ModelStorage `json:"storage,omitempty"`
	// tensorflow serves the model with TF Serving.
	// +optional
	TensorFlow *TensorFlowServer `json:"tensorflow,omitempty"`
	// pytorch serves the model with TorchServe.
	// +optional
	PyTorch *PyTorchServer `json:"pytorch,omitempty"`
	// custom serves the model with a pod of the user's.
	// +optional
	Custom *CustomServer `json:"custom,omitempty"`
	// service configures the Service in front of the pods.
	// +optional
	Service *ServiceOption `json:"service,omitempty"`
}

// AddressPort is a port of a service's address.
type AddressPort struct {
	// port of the Service.
	Port int32 `json:"port"`
	// nodePort of a NodePort Service.
	// +optional
	NodePort int32 `json:"nodePort,omitempty"`
	// protocol of the port.
	// +optional
	Protocol corev1.Protocol `json:"protocol,omitempty"`
}

// SimpleMLServiceAddress is where a SimpleMLService is reached.
type SimpleMLServiceAddress struct {
	// url is the host of the Service: <name>.<namespace>.svc.cluster.local.
	// +optional
	URL string `json:"url,omitempty"`
	// ports of the Service.
	// +optional
	Ports []AddressPort `json:"ports,omitempty"`
}

// SimpleMLServiceStatus is the observed state of a SimpleMLService.
type SimpleMLServiceStatus struct {
	// address of the Service.
	// +optional
	Address *SimpleMLServiceAddress `json:"address,omitempty"`
	// conditions: ModelDownloaded, Ready.
	// +optional
	Conditions []WorkloadCondition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=smls
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.address.url`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS label starting with a letter, as it names the Service"

// SimpleMLService serves a model with a fixed number of replicas behind a
// cluster-internal Service.
type SimpleMLService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SimpleMLServiceSpec `json:"spec"`
	// +optional
	Status SimpleMLServiceStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SimpleMLServiceList is a list of SimpleMLServices.
type SimpleMLServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimpleMLService `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &SimpleMLService{}, &SimpleMLServiceList{})
}
