package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DataType is the kind of storage on one side of a DataCube.
// +kubebuilder:validation:Enum=pvc;git;huggingface;s3
type DataType string

// The DataCube data types.
const (
	DataTypePVC         DataType = "pvc"
	DataTypeGit         DataType = "git"
	DataTypeHuggingFace DataType = "huggingface"
	DataTypeS3          DataType = "s3"
)

// DataReference is one side of a DataCube.
// +kubebuilder:validation:XValidation:rule="self.type != 'pvc' || has(self.pvc)",message="pvc is required when type is pvc"
type DataReference struct {
	// type of the data: pvc, git, huggingface or s3.
	// +required
	Type DataType `json:"type"`
	// options of the data, by name (e.g. url, token, ref, repo, files,
	// path-in-repo, commit-message, s3-endpoint, s3-access-key-id,
	// s3-secret-access-key, s3-uri, s3-no-check-bucket); values may come
	// from Secrets.
	// +optional
	Options []corev1.EnvVar `json:"options,omitempty"`
	// pvc is the data in a PVC.
	// +optional
	PVC *PVCReference `json:"pvc,omitempty"`
}

// PVCReference names a PVC and a path within it.
type PVCReference struct {
	// name of the PVC.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// subPath is a relative path within the PVC, without ".." segments.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.matches('(^|/)[.][.](/|$)')",message="subPath must be a relative path without .. segments"
	SubPath string `json:"subPath,omitempty"`
	// template creates the PVC if it does not exist (the PVC is the destination).
	// +optional
	Template *corev1.PersistentVolumeClaimTemplate `json:"template,omitempty"`
}

// ExecutorOptions says how the transfer runs.
type ExecutorOptions struct {
	// sync deletes on the destination the files the source lacks (S3
	// downloads and uploads, Hugging Face downloads); false only copies.
	// +optional
	Sync bool `json:"sync,omitempty"`
	// backoffLimit is the number of retries before the DataCube fails. Defaults to 0.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
	// activeDeadlineSeconds limits each attempt; an attempt that runs
	// longer fails and is retried. Unset means no limit.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	// extraArgs are appended to the executor's command line. Only the
	// flags --concurrency, --part-size, --connect-timeout, --no-fsync,
	// --sync-allow-empty, --cache-dir and -v are allowed (as --flag=value or --flag value).
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.startsWith('-') || a.matches('^--?(concurrency|part-size|connect-timeout|no-fsync|sync-allow-empty|cache-dir|v)(=.*)?$'))",message="only the flags --concurrency, --part-size, --connect-timeout, --no-fsync, --sync-allow-empty, --cache-dir and -v are allowed"
	ExtraArgs []string `json:"extraArgs,omitempty"`
}

// ExecutorReference configures the executor of a DataCube.
type ExecutorReference struct {
	// options of the executor.
	// +optional
	Options ExecutorOptions `json:"options,omitempty"`
	// env of the executor's container, e.g. HTTPS_PROXY.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// securityContext of the executor's pod.
	// +optional
	SecurityContext *corev1.PodSecurityContext `json:"securityContext,omitempty"`
}

// DataCubeSpec is the desired state of a DataCube.
// +kubebuilder:validation:XValidation:rule="self.source.type == 'pvc' || self.sink.type == 'pvc'",message="one of spec.source and spec.sink must be of type pvc"
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: create a new DataCube for another transfer"
type DataCubeSpec struct {
	// source is where the data is.
	// +required
	Source DataReference `json:"source"`
	// sink is where the data goes.
	// +required
	Sink DataReference `json:"sink"`
	// executor says how the data is transferred.
	// +optional
	Executor ExecutorReference `json:"executor,omitempty"`
}

// DataCubeConditionType is Initialized, Complete or Failed.
type DataCubeConditionType string

// The DataCube condition types.
const (
	DataCubeInitialized DataCubeConditionType = "Initialized"
	DataCubeComplete    DataCubeConditionType = "Complete"
	DataCubeFailed      DataCubeConditionType = "Failed"
)

// DataCubeCondition describes one aspect of a DataCube's state.
type DataCubeCondition struct {
	// type of the condition.
	Type DataCubeConditionType `json:"type"`
	// status is True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// lastProbeTime is when the condition was last checked.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
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

// DataCubePhase is the coarse state of a DataCube: Pending, Running,
// Succeeded or Failed.
type DataCubePhase string

// The DataCube phases.
const (
	DataCubePending     DataCubePhase = "Pending"
	DataCubeRunning     DataCubePhase = "Running"
	DataCubeSucceeded   DataCubePhase = "Succeeded"
	DataCubeFailedPhase DataCubePhase = "Failed"
)

// PodReference names a pod.
type PodReference struct {
	// name of the pod.
	Name string `json:"name"`
	// uid of the pod.
	UID types.UID `json:"uid"`
}

// PodStatus is the state of the pod running the transfer.
type PodStatus struct {
	// reference to the pod.
	Reference PodReference `json:"reference"`
	// phase of the pod.
	// +optional
	Phase corev1.PodPhase `json:"phase,omitempty"`
	// status of the pod's container, e.g. Completed or Error.
	// +optional
	Status string `json:"status,omitempty"`
}

// TransferProgress is what the executor reported for its last attempt.
type TransferProgress struct {
	// bytes transferred.
	Bytes int64 `json:"bytes"`
	// files transferred.
	Files int64 `json:"files"`
	// skipped files, already up to date.
	// +optional
	Skipped int64 `json:"skipped,omitempty"`
	// deleted files, by sync.
	// +optional
	Deleted int64 `json:"deleted,omitempty"`
	// duration of the attempt in seconds, e.g. 12.345s.
	// +optional
	Duration string `json:"duration,omitempty"`
}

// DataCubeStatus is the observed state of a DataCube.
type DataCubeStatus struct {
	// phase is the coarse state.
	// +optional
	Phase DataCubePhase `json:"phase,omitempty"`
	// conditions: Initialized, Complete, Failed.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []DataCubeCondition `json:"conditions,omitempty"`
	// pod is the state of the pod running the transfer.
	// +optional
	Pod *PodStatus `json:"pod,omitempty"`
	// progress is what the executor reported at the end of its last attempt.
	// +optional
	Progress *TransferProgress `json:"progress,omitempty"`
}

// DataCube moves data between a PVC and Git, Hugging Face or S3.
//
// The controller runs each DataCube as a Job in the DataCube's namespace,
// whose pod mounts the named PVC and reads the options' Secrets and
// ConfigMaps: whoever may create a DataCube in a namespace can do what a pod
// created there could. Grant DataCube create as you would pod create.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.source.type`
// +kubebuilder:printcolumn:name="Sink",type=string,JSONPath=`.spec.sink.type`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 54",message="metadata.name must be at most 54 characters: the DataCube's Job is named <name>-batchjob"
type DataCube struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the transfer.
	Spec DataCubeSpec `json:"spec"`
	// status is the observed state.
	// +optional
	Status DataCubeStatus `json:"status,omitempty"`
}

// DataCubeList is a list of DataCubes.
// +kubebuilder:object:root=true
type DataCubeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DataCube `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &DataCube{}, &DataCubeList{})
}
