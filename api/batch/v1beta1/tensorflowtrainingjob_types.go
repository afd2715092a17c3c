package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// TensorFlowReplicaType is the role of TensorFlow replicas: chief, worker, ps
// or evaluator.
// +kubebuilder:validation:Enum=chief;worker;ps;evaluator
type TensorFlowReplicaType string

// The TensorFlow replica types.
const (
	TensorFlowChief     TensorFlowReplicaType = "chief"
	TensorFlowWorker    TensorFlowReplicaType = "worker"
	TensorFlowPS        TensorFlowReplicaType = "ps"
	TensorFlowEvaluator TensorFlowReplicaType = "evaluator"
)

// TensorFlowReplicaSpec describes the replicas of one type of a
// TensorFlowTrainingJob.
type TensorFlowReplicaSpec struct {
	// type is chief (at most one replica), worker, ps or evaluator. The chief,
	// or else worker 0, decides the job's end.
	Type TensorFlowReplicaType `json:"type"`
	// replicas is the number of pods of this type. Defaults to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Replicas *int32 `json:"replicas,omitempty"`
	// restartPolicy says when the controller recreates a pod of this type:
	// Never, OnFailure (the default), Always or ExitCode.
	// +optional
	// +kubebuilder:default=OnFailure
	RestartPolicy ReplicaRestartPolicy `json:"restartPolicy,omitempty"`
	// template is the pod template of this type. Its restartPolicy is always
	// Never: the controller recreates pods itself. The main container is the
	// one named tensorflow, or else the first.
	Template corev1.PodTemplateSpec `json:"template"`
}

// TensorFlowTrainingJobSpec is the desired state of a TensorFlowTrainingJob.
type TensorFlowTrainingJobSpec struct {
	// replicaSpecs are the replica types of the job, at least one, each type
	// once.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +listType=map
	// +listMapKey=type
	ReplicaSpecs []TensorFlowReplicaSpec `json:"replicaSpecs"`
	// enableDynamicWorker gives each replica a sparse TF_CONFIG that names
	// only the parameter servers and the replica itself, so that workers can
	// come and go without the others' cluster changing.
	// +optional
	EnableDynamicWorker bool `json:"enableDynamicWorker,omitempty"`
	// runMode is immediate (unset), debug or pause.
	// +optional
	RunMode *RunMode `json:"runMode,omitempty"`
	// tensorboardSpec, if set, makes the controller create a TensorBoard named
	// after the job over the training's logs.
	// +optional
	TensorboardSpec *tensorstackv1beta1.TensorBoardSpec `json:"tensorboardSpec,omitempty"`
	// runPolicy bounds the job's run time and restarts, and says what is
	// deleted when it ends.
	// +optional
	// +kubebuilder:default={}
	RunPolicy RunPolicy `json:"runPolicy,omitempty"`
	// scheduler chooses the scheduler; unset means the default kube-scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
}

// TensorFlowTrainingJobStatus is the observed state of a TensorFlowTrainingJob.
type TensorFlowTrainingJobStatus struct {
	TrainingJobStatus `json:",inline"`
	// tensorboard is the state of the job's TensorBoard.
	// +optional
	Tensorboard *DependentStatus `json:"tensorboard,omitempty"`
}

// TensorFlowTrainingJob runs distributed TensorFlow training: the controller
// gives every replica a TF_CONFIG naming the cluster and the replica's task.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=tj
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.backoffCount`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="(has(self.spec.runMode) && has(self.spec.runMode.pause) && has(self.spec.runMode.pause.resumeSpecs) ? self.spec.runMode.pause.resumeSpecs : []) == (has(oldSelf.spec.runMode) && has(oldSelf.spec.runMode.pause) && has(oldSelf.spec.runMode.pause.resumeSpecs) ? oldSelf.spec.runMode.pause.resumeSpecs : [])",message="spec.runMode.pause.resumeSpecs cannot be changed after the job is created"
type TensorFlowTrainingJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	Spec TensorFlowTrainingJobSpec `json:"spec"`
	// status is the observed state.
	// +optional
	Status TensorFlowTrainingJobStatus `json:"status,omitempty"`
}

// TensorFlowTrainingJobList is a list of TensorFlowTrainingJobs.
// +kubebuilder:object:root=true
type TensorFlowTrainingJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TensorFlowTrainingJob `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &TensorFlowTrainingJob{}, &TensorFlowTrainingJobList{})
}
