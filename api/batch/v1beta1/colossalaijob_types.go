package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ColossalAIReplicaType is a replica type of a ColossalAIJob in the
// replicaSpecs layout.
// +kubebuilder:validation:Enum=launcher;worker
type ColossalAIReplicaType string

// The ColossalAIJob replica types.
const (
	ColossalAILauncher ColossalAIReplicaType = "launcher"
	ColossalAIWorker   ColossalAIReplicaType = "worker"
)

// ColossalAISSHConfig is how the workers of a ColossalAIJob run sshd.
type ColossalAISSHConfig struct {
	// authMountPath is where the job's SSH key pair, authorized_keys and
	// client config are mounted in every pod. Defaults to /root/.ssh.
	// +optional
	// +kubebuilder:default="/root/.ssh"
	AuthMountPath string `json:"authMountPath,omitempty"`
	// sshdPath is the absolute path of sshd in the worker image. Defaults to
	// /usr/sbin/sshd.
	// +optional
	SSHDPath string `json:"sshdPath,omitempty"`
}

// ColossalAILauncherSpec is the launcher of a ColossalAIJob in the launcher
// layout: a pod like the workers with its own image.
type ColossalAILauncherSpec struct {
	// image is the launcher's image; defaults to the worker's.
	// +optional
	Image string `json:"image,omitempty"`
	// workingDir is where the workers change to before they run the script.
	// +optional
	WorkingDir string `json:"workingDir,omitempty"`
	// env are the launcher's variables.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// resources are the launcher's requests and limits.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// ColossalAIWorkerSpec is the workers of a ColossalAIJob in the launcher
// layout.
type ColossalAIWorkerSpec struct {
	// replicas is the number of worker pods. Defaults to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	Replicas *int32 `json:"replicas,omitempty"`
	// procPerWorker is the number of processes per worker. Defaults to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	ProcPerWorker *int32 `json:"procPerWorker,omitempty"`
	// command is the training script and its arguments.
	// +optional
	Command []string `json:"command,omitempty"`
	// torchArgs are further torchrun arguments.
	// +optional
	TorchArgs []string `json:"torchArgs,omitempty"`
	// template is the pod template of the workers; its container named
	// worker, or else its first, runs sshd.
	Template corev1.PodTemplateSpec `json:"template"`
}

// ColossalAIReplicaSpec is one replica type of a ColossalAIJob in the
// replicaSpecs layout.
type ColossalAIReplicaSpec struct {
	// type is launcher or worker.
	Type ColossalAIReplicaType `json:"type"`
	// replicas is the number of pods of this type. Defaults to 1; a launcher
	// has one pod.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Replicas *int32 `json:"replicas,omitempty"`
	// restartPolicy is accepted for the shape of the layout; ColossalAIJob
	// pods are never recreated (a restarted worker cannot rejoin).
	// +optional
	RestartPolicy *RestartPolicy `json:"restartPolicy,omitempty"`
	// template is the pod template of this type. A worker template must have
	// a container named worker, which runs sshd. A launcher template may be
	// empty ({}): the launcher is then derived from the worker template.
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`
}

// TorchConfig is how the launcher of a ColossalAIJob in the replicaSpecs
// layout starts the workers.
type TorchConfig struct {
	// procPerWorker is the number of processes per worker. Defaults to 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ProcPerWorker *int32 `json:"procPerWorker,omitempty"`
	// script is the training script and its arguments.
	// +optional
	Script []string `json:"script,omitempty"`
	// extraArgs are further torchrun arguments.
	// +optional
	ExtraArgs []string `json:"extraArgs,omitempty"`
}

// ColossalAIJobSpec is the desired state of a ColossalAIJob. It is written
// in one of two layouts, never both: launcher and worker; or replicaSpecs
// and torchConfig.
// +kubebuilder:validation:XValidation:rule="!((has(self.worker) || has(self.launcher)) && has(self.replicaSpecs))",message="spec.launcher and spec.worker, and spec.replicaSpecs, are two layouts of one job: use one",fieldPath=".replicaSpecs"
// +kubebuilder:validation:XValidation:rule="has(self.worker) || has(self.replicaSpecs)",message="spec.worker or spec.replicaSpecs is required"
// +kubebuilder:validation:XValidation:rule="!(has(self.torchConfig) && has(self.worker))",message="spec.torchConfig belongs to the replicaSpecs layout; with spec.worker use spec.worker.procPerWorker, command and torchArgs",fieldPath=".torchConfig"
type ColossalAIJobSpec struct {
	// ssh is how the workers run sshd.
	// +optional
	SSH *ColossalAISSHConfig `json:"ssh,omitempty"`
	// launcher is the launcher, in the launcher layout.
	// +optional
	Launcher *ColossalAILauncherSpec `json:"launcher,omitempty"`
	// worker is the workers, in the launcher layout.
	// +optional
	Worker *ColossalAIWorkerSpec `json:"worker,omitempty"`
	// replicaSpecs are the launcher and the workers, in the replicaSpecs
	// layout.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=2
	ReplicaSpecs []ColossalAIReplicaSpec `json:"replicaSpecs,omitempty"`
	// torchConfig is what the workers run, in the replicaSpecs layout.
	// +optional
	TorchConfig *TorchConfig `json:"torchConfig,omitempty"`
	// runPolicy governs the job as a whole.
	// +optional
	RunPolicy MPIRunPolicy `json:"runPolicy,omitempty"`
	// runMode chooses immediate (default), debug or pause mode.
	// +optional
	RunMode *RunMode `json:"runMode,omitempty"`
	// scheduler chooses the scheduler; unset means the default scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ColossalAIJob runs ColossalAI training: worker pods run sshd, and a
// launcher pod starts, once every worker is Ready, the training processes
// on every worker over SSH (torchrun per worker). The launcher's failure
// fails the job; no pod is recreated.
type ColossalAIJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ColossalAIJobSpec `json:"spec"`
	// +optional
	Status JobStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ColossalAIJobList is a list of ColossalAIJobs.
type ColossalAIJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ColossalAIJob `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &ColossalAIJob{}, &ColossalAIJobList{})
}
