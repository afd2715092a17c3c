package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// XGBoostReplicaType is the role of XGBoost replicas: master or worker.
// +kubebuilder:validation:Enum=master;worker
type XGBoostReplicaType string

// The XGBoost replica types.
const (
	XGBoostMaster XGBoostReplicaType = "master"
	XGBoostWorker XGBoostReplicaType = "worker"
)

// XGBoostReplicaSpec describes the replicas of one type of an
// XGBoostTrainingJob.
type XGBoostReplicaSpec struct {
	// type is master or worker. The master (rank 0) runs the tracker the
	// workers join, and decides the job's end.
	Type XGBoostReplicaType `json:"type"`
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
	// one named xgboost, or else the first.
	Template corev1.PodTemplateSpec `json:"template"`
}

// XGBoostTrainingJobSpec is the desired state of an XGBoostTrainingJob.
type XGBoostTrainingJobSpec struct {
	// replicaSpecs are the replica types of the job, at least one, each type
	// once.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	// +listType=map
	// +listMapKey=type
	ReplicaSpecs []XGBoostReplicaSpec `json:"replicaSpecs"`
	// runMode is immediate (unset), debug or pause.
	// +optional
	RunMode *RunMode `json:"runMode,omitempty"`
	// runPolicy bounds the job's run time and restarts, and says what is
	// deleted when it ends.
	// +optional
	// +kubebuilder:default={}
	RunPolicy RunPolicy `json:"runPolicy,omitempty"`
	// scheduler chooses the scheduler; unset means the default kube-scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
}

// XGBoostTrainingJob runs distributed XGBoost training: the controller sets
// MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK and WORKER_ADDRS in every
// replica.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=xj
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.backoffCount`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="(has(self.spec.runMode) && has(self.spec.runMode.pause) && has(self.spec.runMode.pause.resumeSpecs) ? self.spec.runMode.pause.resumeSpecs : []) == (has(oldSelf.spec.runMode) && has(oldSelf.spec.runMode.pause) && has(oldSelf.spec.runMode.pause.resumeSpecs) ? oldSelf.spec.runMode.pause.resumeSpecs : [])",message="spec.runMode.pause.resumeSpecs cannot be changed after the job is created"
type XGBoostTrainingJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	Spec XGBoostTrainingJobSpec `json:"spec"`
	// status is the observed state.
	// +optional
	Status TrainingJobStatus `json:"status,omitempty"`
}

// XGBoostTrainingJobList is a list of XGBoostTrainingJobs.
// +kubebuilder:object:root=true
type XGBoostTrainingJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []XGBoostTrainingJob `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &XGBoostTrainingJob{}, &XGBoostTrainingJobList{})
}
