package v1beta1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// FlinkClusterTemplate describes the FlinkCluster (flinkoperator.k8s.io/v1beta1)
// a BeamJob runs on.
type FlinkClusterTemplate struct {
	// metadata are labels and annotations of the FlinkCluster.
	// +optional
	Metadata metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec is the FlinkCluster's spec, as flink-operator reads it (flinkVersion,
	// image, jobManager, taskManager, flinkProperties and so on); it is
	// passed on as written, but for the job's labels added to the
	// podLabels of jobManager and taskManager. A BeamJob's cluster is a
	// session cluster: it has no spec.job.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Spec runtime.RawExtension `json:"spec"`
}

// BeamRunPolicy says what happens once a BeamJob ends.
type BeamRunPolicy struct {
	// cleanUpCluster deletes the FlinkCluster once the job succeeds or
	// fails. Defaults to false.
	// +optional
	CleanUpCluster bool `json:"cleanUpCluster,omitempty"`
}

// BeamJobSpec is the desired state of a BeamJob.
type BeamJobSpec struct {
	// flinkClusterTemplate is the Flink cluster, <job>-flinkcluster, the
	// pipeline runs on.
	FlinkClusterTemplate FlinkClusterTemplate `json:"flinkClusterTemplate"`
	// jobTemplate is the batch/v1 Job that submits the Beam pipeline once
	// the cluster runs, <job>-batchjob-<random>.
	JobTemplate *batchv1.JobTemplateSpec `json:"jobTemplate"`
	// runPolicy says what happens once the job ends.
	// +optional
	RunPolicy BeamRunPolicy `json:"runPolicy,omitempty"`
	// scheduler chooses the scheduler of the submitter's pods; unset means
	// the default kube-scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
	// runMode is accepted for symmetry with the other T9k jobs.
	// +optional
	RunMode *RunMode `json:"runMode,omitempty"`
}

// BeamJobPhase is the coarse state of a BeamJob.
type BeamJobPhase string

// The BeamJob phases.
const (
	BeamJobInitializing BeamJobPhase = "Initializing"
	BeamJobRunning      BeamJobPhase = "Running"
	BeamJobSucceeded    BeamJobPhase = "Succeeded"
	BeamJobFailed       BeamJobPhase = "Failed"
	BeamJobUnknown      BeamJobPhase = "Unknown"
)

// The BeamJob condition types.
const (
	BeamClusterRunning JobConditionType = "ClusterRunning"
	BeamJobRunningCond JobConditionType = "JobRunning"
)

// PodReference names a pod.
type PodReference struct {
	// name is the pod's name.
	Name string `json:"name"`
	// uid is the pod's UID.
	UID string `json:"uid"`
}

// PodStatus is the phase of one pod.
type PodStatus struct {
	// phase is the pod's phase.
	Phase corev1.PodPhase `json:"phase"`
	// reference names the pod.
	Reference PodReference `json:"reference"`
}

// FlinkClusterStatus is the state of the Flink cluster's pods.
type FlinkClusterStatus struct {
	// jobManagerStatus are the job manager's pods.
	// +optional
	JobManagerStatus []PodStatus `json:"jobManagerStatus,omitempty"`
	// taskManagerStatus are the task managers' pods.
	// +optional
	TaskManagerStatus []PodStatus `json:"taskManagerStatus,omitempty"`
}

// BeamJobStatus is the observed state of a BeamJob.
type BeamJobStatus struct {
	// phase is Initializing, Running, Succeeded, Failed or Unknown.
	// +optional
	Phase BeamJobPhase `json:"phase,omitempty"`
	// conditions are ClusterRunning and JobRunning.
	// +optional
	Conditions []JobCondition `json:"conditions,omitempty"`
	// jobURL is the page of the pipeline in the Flink web UI.
	// +optional
	JobURL string `json:"jobURL,omitempty"`
	// flinkClusterStatus is the state of the Flink cluster's pods.
	// +optional
	FlinkClusterStatus FlinkClusterStatus `json:"flinkClusterStatus,omitempty"`
	// jobStatus are the submitter's pods, more than one after retries.
	// +optional
	JobStatus []PodStatus `json:"jobStatus,omitempty"`
	// startTime is when the controller first acted on the job.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the job succeeded or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// BeamJob runs an Apache Beam pipeline (Python SDK) on a Flink cluster it
// creates: a FlinkCluster, then a batch/v1 Job submitting the pipeline once
// the cluster runs.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=bj
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BeamJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state.
	Spec BeamJobSpec `json:"spec"`
	// status is the observed state.
	// +optional
	Status BeamJobStatus `json:"status,omitempty"`
}

// BeamJobList is a list of BeamJobs.
// +kubebuilder:object:root=true
type BeamJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BeamJob `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &BeamJob{}, &BeamJobList{})
}
