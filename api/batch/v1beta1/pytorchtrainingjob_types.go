package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// PyTorchReplicaSpec describes the replicas of one type of a
// PyTorchTrainingJob.
type PyTorchReplicaSpec struct {
	// type names the replicas, e.g. master, worker or node. The first replica
	// of type master, or else rank 0 of the first type, is the master: the
	// others reach it through MASTER_ADDR and MASTER_PORT, and its end decides
	// the job's.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Type string `json:"type"`
	// replicas is the number of pods of this type. Defaults to 1. Under
	// elastic training, types with a scalingWeight get their number from
	// elastic.expectedReplicas instead.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Replicas *int32 `json:"replicas,omitempty"`
	// scalingWeight is this type's share of the replicas under elastic
	// training: the replicas beyond those of types without a weight are
	// divided among the weighted types in proportion to their weights. When
	// no type has a weight, the worker type (or the only type) scales.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ScalingWeight *int32 `json:"scalingWeight,omitempty"`
	// restartPolicy says when the controller recreates a pod of this type:
	// Never, OnFailure (the default), Always or ExitCode.
	// +optional
	// +kubebuilder:default=OnFailure
	RestartPolicy ReplicaRestartPolicy `json:"restartPolicy,omitempty"`
	// template is the pod template of this type. Its restartPolicy is always
	// Never: the controller recreates pods itself. The main container is the
	// one named pytorch, or else the first.
	Template corev1.PodTemplateSpec `json:"template"`
}

// TorchrunConfig launches the training with torchrun instead of the
// container's command.
type TorchrunConfig struct {
	// enabled replaces the main container's command: a leading python (or
	// python3) is dropped and the rest runs as `torchrun <options> <script or
	// -m module> <args>`. Best written as command [python] with the script
	// in args.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// maxRestarts is how often torchrun restarts the training processes
	// (--max_restarts) before failing.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`
	// procPerNode is the number of training processes per replica
	// (--nproc_per_node): a number, or gpu for as many as the replica's
	// nvidia.com/gpu limit. Defaults to 1.
	// +optional
	// +kubebuilder:validation:Pattern=`^([1-9][0-9]*|gpu|cpu|auto)$`
	ProcPerNode string `json:"procPerNode,omitempty"`
	// rdzvBackend is the rendezvous backend (--rdzv_backend): c10d (the
	// default, built into torch), etcd or etcd-v2 (bring your own etcd). The
	// rendezvous endpoint is the master replica.
	// +optional
	// +kubebuilder:default=c10d
	// +kubebuilder:validation:Enum=c10d;etcd;etcd-v2
	RdzvBackend string `json:"rdzvBackend,omitempty"`
	// extraOptions are more torchrun options, placed after the others.
	// +optional
	ExtraOptions []string `json:"extraOptions,omitempty"`
	// minNodes is the least number of replicas torchrun waits for
	// (--nnodes=<minNodes>:<replicas>) without elastic training. Prefer
	// elastic.minReplicas.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	MinNodes *int32 `json:"minNodes,omitempty"`
}

// ElasticConfig makes a torchrun training elastic: it runs with between
// minReplicas and maxReplicas replicas and can be resized while it runs.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",message="minReplicas must not exceed maxReplicas",fieldPath=".minReplicas"
type ElasticConfig struct {
	// enabled turns elastic training on; it needs torchrunConfig.enabled.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// minReplicas is the least number of replicas the job runs with; the T9k
	// Scheduler's PodGroup waits for this many. Cannot be changed.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// maxReplicas is the most replicas the job runs with. Cannot be changed.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	// expectedReplicas is the number of replicas wanted now, kept within
	// [minReplicas, maxReplicas]. You or an autoscaler (through the scale
	// subresource) may change it at any time: replicas are added or removed
	// (the highest ranks first) without restarting the others. Fewer may run
	// when resources are short.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	ExpectedReplicas *int32 `json:"expectedReplicas,omitempty"`
}

// PyTorchTrainingJobSpec is the desired state of a PyTorchTrainingJob.
type PyTorchTrainingJobSpec struct {
	// replicaSpecs are the replica types of the job, at least one, each type
	// once.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=type
	ReplicaSpecs []PyTorchReplicaSpec `json:"replicaSpecs"`
	// elastic makes the training elastic; it needs torchrunConfig.enabled.
	// +optional
	Elastic *ElasticConfig `json:"elastic,omitempty"`
	// torchrunConfig launches the training with torchrun.
	// +optional
	TorchrunConfig *TorchrunConfig `json:"torchrunConfig,omitempty"`
	// runMode is immediate (unset), debug or pause.
	// +optional
	RunMode *RunMode `json:"runMode,omitempty"`
	// runPolicy bounds the job's run time and restarts, and says what is
	// deleted when it ends.
	// +optional
	// +kubebuilder:default={}
	RunPolicy RunPolicy `json:"runPolicy,omitempty"`
	// tensorboardSpec, if set, makes the controller create a TensorBoard named
	// after the job over the training's logs.
	// +optional
	TensorboardSpec *tensorstackv1beta1.TensorBoardSpec `json:"tensorboardSpec,omitempty"`
	// scheduler chooses the scheduler; unset means the default kube-scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
}

// ElasticStatus is the size of an elastic training.
type ElasticStatus struct {
	// currentReplicas is the number of replica pods that exist now.
	CurrentReplicas int32 `json:"currentReplicas"`
	// selector selects the job's pods, for autoscalers.
	// +optional
	Selector string `json:"selector,omitempty"`
}

// PyTorchTrainingJobStatus is the observed state of a PyTorchTrainingJob.
type PyTorchTrainingJobStatus struct {
	TrainingJobStatus `json:",inline"`
	// tensorboard is the state of the job's TensorBoard.
	// +optional
	Tensorboard *DependentStatus `json:"tensorboard,omitempty"`
	// elastic is the size of an elastic training; the scale subresource reads
	// it.
	// +optional
	Elastic *ElasticStatus `json:"elastic,omitempty"`
}

// PyTorchTrainingJob runs distributed PyTorch training: the controller sets
// MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK in every replica, or launches
// it with torchrun, possibly elastic.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=pj
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.elastic.expectedReplicas,statuspath=.status.elastic.currentReplicas,selectorpath=.status.elastic.selector
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.backoffCount`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="(has(self.spec.elastic) && has(self.spec.elastic.minReplicas) ? self.spec.elastic.minReplicas : 0) == (has(oldSelf.spec.elastic) && has(oldSelf.spec.elastic.minReplicas) ? oldSelf.spec.elastic.minReplicas : 0)",message="spec.elastic.minReplicas cannot be changed after the job is created"
// +kubebuilder:validation:XValidation:rule="(has(self.spec.elastic) && has(self.spec.elastic.maxReplicas) ? self.spec.elastic.maxReplicas : 0) == (has(oldSelf.spec.elastic) && has(oldSelf.spec.elastic.maxReplicas) ? oldSelf.spec.elastic.maxReplicas : 0)",message="spec.elastic.maxReplicas cannot be changed after the job is created"
// +kubebuilder:validation:XValidation:rule="(has(self.spec.runMode) && has(self.spec.runMode.pause) && has(self.spec.runMode.pause.resumeSpecs) ? self.spec.runMode.pause.resumeSpecs : []) == (has(oldSelf.spec.runMode) && has(oldSelf.spec.runMode.pause) && has(oldSelf.spec.runMode.pause.resumeSpecs) ? oldSelf.spec.runMode.pause.resumeSpecs : [])",message="spec.runMode.pause.resumeSpecs cannot be changed after the job is created"
type PyTorchTrainingJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	Spec PyTorchTrainingJobSpec `json:"spec"`
	// status is the observed state.
	// +optional
	Status PyTorchTrainingJobStatus `json:"status,omitempty"`
}

// PyTorchTrainingJobList is a list of PyTorchTrainingJobs.
// +kubebuilder:object:root=true
type PyTorchTrainingJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PyTorchTrainingJob `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &PyTorchTrainingJob{}, &PyTorchTrainingJobList{})
}
