package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeepSpeedWorkerSpec is the workers of a DeepSpeedJob.
type DeepSpeedWorkerSpec struct {
	// replicas is the number of worker pods. Defaults to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	Replicas *int32 `json:"replicas,omitempty"`
	// restartPolicy says when worker pods are recreated: Never, OnFailure
	// (the default), Always or ExitCode. Every recreation counts against
	// runPolicy.backoffLimit.
	// +optional
	RestartPolicy ReplicaRestartPolicy `json:"restartPolicy,omitempty"`
	// template is the pod template of the workers. Its container named
	// worker, or else its first, runs sshd; worker 0's runs the deepspeed
	// launcher as well.
	Template corev1.PodTemplateSpec `json:"template"`
}

// DeepSpeedRun is what the deepspeed launcher runs on every rank: exactly
// one of python, module and exec.
type DeepSpeedRun struct {
	// python is a Python script and its arguments.
	// +optional
	Python []string `json:"python,omitempty"`
	// module is a Python module and its arguments (deepspeed --module).
	// +optional
	Module []string `json:"module,omitempty"`
	// exec is an executable and its arguments (deepspeed --no_python).
	// +optional
	Exec []string `json:"exec,omitempty"`
}

// DeepSpeedAutotune is the deepspeed launcher's --autotuning mode.
// +kubebuilder:validation:Enum=none;tune;run
type DeepSpeedAutotune string

// The autotuning modes.
const (
	DeepSpeedAutotuneNone DeepSpeedAutotune = "none"
	DeepSpeedAutotuneTune DeepSpeedAutotune = "tune"
	DeepSpeedAutotuneRun  DeepSpeedAutotune = "run"
)

// DeepSpeedConfig is how the deepspeed launcher runs.
type DeepSpeedConfig struct {
	// run is what every rank runs.
	// +optional
	Run *DeepSpeedRun `json:"run,omitempty"`
	// slotsPerWorker is the number of ranks per worker, usually its GPUs.
	// Defaults to 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	SlotsPerWorker *int32 `json:"slotsPerWorker,omitempty"`
	// slotPerWorker is slotsPerWorker as one example of the user manual
	// spells it; slotsPerWorker wins when both are set.
	// +optional
	// +kubebuilder:validation:Minimum=1
	SlotPerWorker *int32 `json:"slotPerWorker,omitempty"`
	// localRank passes the local rank to every rank (--local_rank and
	// LOCAL_RANK). Defaults to true.
	// +optional
	LocalRank *bool `json:"localRank,omitempty"`
	// autotune is none (the default), tune or run.
	// +optional
	Autotune DeepSpeedAutotune `json:"autotune,omitempty"`
	// otherArgs are further deepspeed launcher flags; only the pdsh launcher
	// is supported.
	// +optional
	OtherArgs []string `json:"otherArgs,omitempty"`
	// customCommand replaces the deepspeed command line: worker 0 runs it
	// with sh -c, after every worker's sshd answers.
	// +optional
	CustomCommand string `json:"customCommand,omitempty"`
}

// DeepSpeedJobSpec is the desired state of a DeepSpeedJob.
type DeepSpeedJobSpec struct {
	// worker is the workers.
	Worker DeepSpeedWorkerSpec `json:"worker"`
	// config is how the deepspeed launcher runs.
	// +optional
	Config DeepSpeedConfig `json:"config,omitempty"`
	// elastic lets the number of workers change between minReplicas and
	// maxReplicas; the PodGroup then places minReplicas together.
	// +optional
	Elastic *ElasticConfig `json:"elastic,omitempty"`
	// disableCustomEnv leaves out the env file (.deepspeed_env) with the
	// worker container's variables, which the launcher otherwise passes to
	// every rank.
	// +optional
	DisableCustomEnv bool `json:"disableCustomEnv,omitempty"`
	// runMode chooses immediate (default), debug or pause mode.
	// +optional
	RunMode *RunMode `json:"runMode,omitempty"`
	// runPolicy bounds the job's run time and restarts, and says what is
	// cleaned up when it ends.
	// +optional
	RunPolicy RunPolicy `json:"runPolicy,omitempty"`
	// scheduler chooses the scheduler; unset means the default scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.backoffCount`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// DeepSpeedJob runs DeepSpeed training: every worker runs sshd, and worker
// 0 runs the deepspeed launcher, which starts the ranks on every worker
// through pdsh with the job's hostfile and env file. Worker 0 decides the
// job.
type DeepSpeedJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec DeepSpeedJobSpec `json:"spec"`
	// +optional
	Status TrainingJobStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// DeepSpeedJobList is a list of DeepSpeedJobs.
type DeepSpeedJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DeepSpeedJob `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &DeepSpeedJob{}, &DeepSpeedJobList{})
}
