package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SchedulePolicy chooses the scheduler of a workload's pods. Unset means the
// default kube-scheduler.
type SchedulePolicy struct {
	// t9kScheduler places the pods with the T9k Scheduler, in a queue.
	// +optional
	T9kScheduler *T9kScheduler `json:"t9kScheduler,omitempty"`
}

// T9kScheduler names the queue of a workload under the T9k Scheduler.
type T9kScheduler struct {
	// queue is the name of the Queue the workload's pods join.
	Queue string `json:"queue"`
}

// PVCDataSource is a PVC holding training logs.
type PVCDataSource struct {
	// name of the PVC, in the TensorBoard's namespace.
	Name string `json:"name"`
	// subPath are the directories within the PVC that hold logs.
	// +optional
	SubPath []string `json:"subPath,omitempty"`
}

// SecretRef names a Secret in the same namespace.
type SecretRef struct {
	// name of the Secret.
	Name string `json:"name"`
}

// S3DataSource is S3 storage holding training logs.
type S3DataSource struct {
	// secretRef names the Secret with the S3 endpoint and credentials.
	SecretRef SecretRef `json:"secretRef"`
	// uri are the s3://bucket/prefix locations of the logs.
	// +optional
	URI []string `json:"uri,omitempty"`
}

// HTTPDataSource is logs served over HTTP.
type HTTPDataSource struct {
	// url are the locations of the log files.
	// +optional
	URL []string `json:"url,omitempty"`
}

// TensorBoardDataSource says where a TensorBoard reads training logs: PVCs, S3
// and HTTP, any of them together.
type TensorBoardDataSource struct {
	// pvc are PVCs mounted into the TensorBoard.
	// +optional
	PVC []PVCDataSource `json:"pvc,omitempty"`
	// s3 is an S3 service and the Secret to reach it.
	// +optional
	S3 *S3DataSource `json:"s3,omitempty"`
	// http are URLs of log files.
	// +optional
	HTTP *HTTPDataSource `json:"http,omitempty"`
}

// TensorBoardSpec is the desired state of a TensorBoard.
type TensorBoardSpec struct {
	// trainingLogFilesets are the locations of training logs, each
	// t9k://pvc/<pvc-name>/<subpath> or t9k://minio/<secret-name>/<bucket>/<subpath>.
	// Deprecated: use logDir.
	// +optional
	TrainingLogFilesets []string `json:"trainingLogFilesets,omitempty"`
	// logDir are the data sources holding training logs.
	// +optional
	LogDir *TensorBoardDataSource `json:"logDir,omitempty"`
	// image is the container image that runs TensorBoard.
	// +optional
	Image string `json:"image,omitempty"`
	// suspend deletes the TensorBoard's pod while true, keeping its other
	// objects for when it resumes. Defaults to false.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// scheduler chooses the scheduler of the TensorBoard's pod; unset means the
	// default kube-scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
	// resources are the compute resources of the TensorBoard container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// TensorBoardPhase is the coarse state of a TensorBoard.
type TensorBoardPhase string

// The TensorBoard phases.
const (
	TensorBoardPending   TensorBoardPhase = "Pending"
	TensorBoardRunning   TensorBoardPhase = "Running"
	TensorBoardSuspended TensorBoardPhase = "Suspended"
	TensorBoardFailed    TensorBoardPhase = "Failed"
	TensorBoardUnknown   TensorBoardPhase = "Unknown"
)

// TensorBoardConditionType names a TensorBoard condition, e.g. Idle.
type TensorBoardConditionType string

// TensorBoardCondition describes one aspect of a TensorBoard's state.
type TensorBoardCondition struct {
	// type of the condition, e.g. Idle.
	Type TensorBoardConditionType `json:"type"`
	// status is True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// message says why, for humans.
	// +optional
	Message string `json:"message,omitempty"`
	// lastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// lastProbeTime is when the condition was last checked.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
}

// TensorBoardStatus is the observed state of a TensorBoard.
type TensorBoardStatus struct {
	// phase is the coarse state: Pending, Running, Suspended, Failed or Unknown.
	// +optional
	Phase TensorBoardPhase `json:"phase,omitempty"`
	// pod is the state of the pod serving TensorBoard.
	// +optional
	Pod *PodStatus `json:"pod,omitempty"`
	// conditions explain the state, e.g. Idle.
	// +optional
	Conditions []TensorBoardCondition `json:"conditions,omitempty"`
	// url is where the TensorBoard web UI is served.
	// +optional
	URL string `json:"url,omitempty"`
}

// TensorBoard serves TensorBoard over training logs kept in PVCs, S3 or HTTP.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TensorBoard struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	Spec TensorBoardSpec `json:"spec"`
	// status is the observed state.
	// +optional
	Status TensorBoardStatus `json:"status,omitempty"`
}

// TensorBoardList is a list of TensorBoards.
// +kubebuilder:object:root=true
type TensorBoardList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TensorBoard `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &TensorBoard{}, &TensorBoardList{})
}
