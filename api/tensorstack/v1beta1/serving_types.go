package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DefaultModelMountPath is where a model is mounted or downloaded when its
// storage names no mountPath.
const DefaultModelMountPath = "/var/lib/t9k/model"

// ModelStorage is where a served model comes from: exactly one of a PVC,
// mounted, or an S3 directory, downloaded by an init container.
// +kubebuilder:validation:XValidation:rule="has(self.pvc) != has(self.s3)",message="exactly one of pvc or s3"
type ModelStorage struct {
	// pvc mounts the model from a PersistentVolumeClaim.
	// +optional
	PVC *PVCModelStorage `json:"pvc,omitempty"`
	// s3 downloads the model from S3 before the server starts.
	// +optional
	S3 *S3ModelStorage `json:"s3,omitempty"`
}

// PVCModelStorage mounts a model from a PVC.
type PVCModelStorage struct {
	// name of the PVC, in the service's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// subPath is the directory within the PVC holding the model, relative
	// (no leading /, no ..); empty means the volume's root.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/')",message="must be a relative path"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.][.](/|$)')",message="must not contain '..'"
	SubPath string `json:"subPath,omitempty"`
	// mountPath is the absolute path the model is mounted at in the
	// server's containers. Defaults to /var/lib/t9k/model.
	// +optional
	// +kubebuilder:default="/var/lib/t9k/model"
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="must be an absolute path"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9._/-]+$') && !self.matches('(^|/)[.][.](/|$)')",message="may hold only letters, digits, '.', '_', '-' and '/', and no '..'"
	MountPath string `json:"mountPath,omitempty"`
}

// S3ModelStorage downloads a model from S3.
type S3ModelStorage struct {
	// secretRef names the Secret holding the S3 endpoint and credentials,
	// under the keys endpoint, accessKeyID and secretAccessKey.
	SecretRef SecretRef `json:"secretRef"`
	// uri of the model: s3://<bucket>/<dir>/ or s3://<bucket>/<file>.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.matches('^s3://[a-z0-9][a-z0-9.-]*[a-z0-9](/.*)?$')",message="must be an s3:// URI naming a bucket"
	URI string `json:"uri"`
	// mountPath is the absolute path the model is downloaded to in the
	// server's containers. Defaults to /var/lib/t9k/model.
	// +optional
	// +kubebuilder:default="/var/lib/t9k/model"
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="must be an absolute path"
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9._/-]+$') && !self.matches('(^|/)[.][.](/|$)')",message="may hold only letters, digits, '.', '_', '-' and '/', and no '..'"
	MountPath string `json:"mountPath,omitempty"`
}

// MountPath returns the path the model is mounted or downloaded at.
func (s *ModelStorage) MountPath() string {
	switch {
	case s == nil:
	case s.PVC != nil && s.PVC.MountPath != "":
		return s.PVC.MountPath
	case s.S3 != nil && s.S3.MountPath != "":
		return s.S3.MountPath
	}
	return DefaultModelMountPath
}

// ServingPodTemplate is a pod template whose spec may leave out the
// containers: it is strategic-merge-patched onto a runtime's.
type ServingPodTemplate struct {
	// metadata: the labels and annotations of the pods.
	// +optional
	Metadata ServingPodMeta `json:"metadata,omitempty"`
	// spec is a PodSpec (containers optional) merged onto the runtime's
	// template: containers merge by name and new ones are appended, scalars
	// such as image are overridden and lists such as args are replaced.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec *runtime.RawExtension `json:"spec,omitempty"`
}

// ServingPodMeta holds the labels and annotations of serving pods.
type ServingPodMeta struct {
	// labels of the pods.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// annotations of the pods.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// LoggerMode chooses which events a logger sends.
// +kubebuilder:validation:Enum=all;request;response
type LoggerMode string

// The logger modes.
const (
	LoggerAll      LoggerMode = "all"
	LoggerRequest  LoggerMode = "request"
	LoggerResponse LoggerMode = "response"
)

// LoggerSpec sends each request and response as a CloudEvent.
type LoggerSpec struct {
	// urls the events are POSTed to, each of them.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=2048
	// +kubebuilder:validation:items:Pattern=`^https?://[^\s]+$`
	URLs []string `json:"urls"`
	// mode: all (default), request or response.
	// +optional
	// +kubebuilder:default=all
	Mode LoggerMode `json:"mode,omitempty"`
	// resources of the process that sends the events.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}
