package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Distribution strategies of spec.distributionStrategy.
const (
	// ParameterServerStrategy gives task pods TF_CONFIG.
	ParameterServerStrategy = "ParameterServerStrategy"
	// AllreduceStrategy gives task pods RDZV_ENDPOINT.
	AllreduceStrategy = "AllreduceStrategy"
	// LocalStrategy runs in one process; only DLRover's master reads it.
	LocalStrategy = "Local"
	// CustomStrategy is left to the user's program.
	CustomStrategy = "CustomStrategy"
)

// ElasticJobSpec is the desired state of an ElasticJob.
type ElasticJobSpec struct {
	// distributionStrategy is ParameterServerStrategy (task pods get
	// TF_CONFIG), AllreduceStrategy (task pods get RDZV_ENDPOINT), Local or
	// CustomStrategy.
	// +optional
	DistributionStrategy string `json:"distributionStrategy,omitempty"`

	// resourceLimits is the most the whole job may use, for example
	// {"cpu": "100", "memory": "10240Mi"}; DLRover's master reads it.
	// +optional
	ResourceLimits map[string]string `json:"resourceLimits,omitempty"`

	// optimizeMode is single-job, cluster or manual; with cluster the
	// master pod gets DLROVER_BRAIN_SERVICE_ADDR.
	// +optional
	OptimizeMode string `json:"optimizeMode,omitempty"`

	// brainService is the address of DLRover Brain when optimizeMode is
	// cluster; empty means dlrover-brain.dlrover.svc.cluster.local:50001.
	// +optional
	BrainService string `json:"brainService,omitempty"`

	// replicaSpecs maps a replica type (ps, worker, chief, evaluator,
	// dlrover-master) to its spec.
	// +required
	ReplicaSpecs map[ReplicaType]*ReplicaSpec `json:"replicaSpecs"`

	// envs is declared for compatibility and not used.
	// +optional
	Envs map[string]*corev1.EnvVar `json:"envs,omitempty"`
}

// ReplicaSpec is the spec of one replica type of an ElasticJob.
type ReplicaSpec struct {
	CommonReplicaSpec `json:",inline"`

	// restartCount is how many times a failed pod of the type is relaunched;
	// 0 means DLRover's default, 3. At most 5 relaunches are made.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RestartCount int `json:"restartCount,omitempty"`

	// autoScale lets DLRover's master scale the type.
	// +optional
	AutoScale bool `json:"autoScale,omitempty"`

	// restartTimeout is how many seconds DLRover's master waits for a
	// hanging replica.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RestartTimeout int `json:"restartTimeout,omitempty"`

	// priority is high, low (the default) or a fraction such as 0.5, the
	// share of workers with high priority.
	// +optional
	Priority string `json:"priority,omitempty"`

	// BatchScheduler is default (elastic) or volcano (gang); DLRover spells
	// its JSON key with a capital B.
	// +optional
	BatchScheduler string `json:"BatchScheduler,omitempty"` //nolint:tagliatelle // DLRover's key
}

// ElasticJobStatus is the observed state of an ElasticJob.
type ElasticJobStatus struct {
	// status holds the conditions and replica counts; DLRover nests them
	// under status.status.
	// +optional
	JobStatus `json:"status,omitempty"`

	// phase is the type of the condition set last.
	// +optional
	Phase JobConditionType `json:"phase,omitempty"`

	// scalePlan names the ScalePlan executed last.
	// +optional
	ScalePlan string `json:"scalePlan,omitempty"`
}

// ElasticJob is a DLRover elastic training job: parameter servers, workers,
// a chief and evaluators, scaled by ScalePlans.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ElasticJob struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	// +optional
	Spec ElasticJobSpec `json:"spec,omitempty"`
	// status is the observed state.
	// +optional
	Status ElasticJobStatus `json:"status,omitempty"`
}

// ElasticJobList is a list of ElasticJobs.
// +kubebuilder:object:root=true
type ElasticJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ElasticJob `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &ElasticJob{}, &ElasticJobList{})
}
