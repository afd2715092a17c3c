package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MPIReplicaType is a replica type of an MPIJob in the replicaSpecs layout.
// +kubebuilder:validation:Enum=launcher;worker
type MPIReplicaType string

// The MPIJob replica types.
const (
	MPILauncher MPIReplicaType = "launcher"
	MPIWorker   MPIReplicaType = "worker"
)

// MPIWorkerSpec is the workers of an MPIJob in the worker layout.
type MPIWorkerSpec struct {
	// replicas is the number of worker pods. Defaults to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	Replicas *int32 `json:"replicas,omitempty"`
	// processesPerWorker is the number of MPI processes each worker runs:
	// the worker's slots in the hostfile, so that mpirun without -np starts
	// replicas × processesPerWorker processes. Unset, the slots are the
	// worker's accelerators, else its whole CPUs, at least 1. Either way
	// they are raised to the -N (--npernode) of extraMPIArgs.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	ProcessesPerWorker *int32 `json:"processesPerWorker,omitempty"`
	// processRecovery lets mpirun restart a failed MPI process in place
	// (mpirun --enable-recovery --max-restarts <limit>) instead of aborting
	// the job. Worker pods are never recreated either way.
	// +optional
	ProcessRecovery *MPIProcessRecovery `json:"processRecovery,omitempty"`
	// extraMPIArgs are passed to mpirun before cmd, e.g. ["-N", "3",
	// "--allow-run-as-root"].
	// +optional
	ExtraMPIArgs []string `json:"extraMPIArgs,omitempty"`
	// cmd is what every MPI process runs, e.g. ["./random_walk", "20"].
	// +optional
	Cmd []string `json:"cmd,omitempty"`
	// template is the pod template of the workers, and of the launcher, which
	// is derived from it. It must have a container named mpi-worker: in the
	// workers it runs sshd (its command and args are ignored); in the
	// launcher it runs mpirun.
	Template corev1.PodTemplateSpec `json:"template"`
}

// MPIProcessRecovery is how mpirun restarts failed MPI processes.
type MPIProcessRecovery struct {
	// enable turns process recovery on: mpirun --enable-recovery.
	// +optional
	Enable bool `json:"enable,omitempty"`
	// limit is the most restarts of any one process (mpirun
	// --max-restarts). Defaults to 3 when enable is set.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Limit *int32 `json:"limit,omitempty"`
}

// MPIReplicaSpec is one replica type of an MPIJob in the replicaSpecs layout.
type MPIReplicaSpec struct {
	// type is launcher or worker.
	Type MPIReplicaType `json:"type"`
	// replicas is the number of pods of this type. Defaults to 1; a launcher
	// has one pod.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Replicas *int32 `json:"replicas,omitempty"`
	// restartPolicy says when the pods of this type are recreated, and how
	// often. Defaults to OnFailure with limit 0.
	// +optional
	RestartPolicy *RestartPolicy `json:"restartPolicy,omitempty"`
	// template is the pod template of this type. A worker template must have
	// a container named worker, which runs sshd (its command and args are
	// ignored). A launcher template may be empty ({}): the launcher is then
	// derived from the worker template; its container named launcher, or else
	// its first, runs mpirun.
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`
}

// MPIConfig is how an MPIJob in the replicaSpecs layout runs mpirun.
type MPIConfig struct {
	// home is where Open MPI is installed, e.g. /usr/local; passed to mpirun
	// as --prefix.
	// +optional
	Home string `json:"home,omitempty"`
	// mca are MCA parameters, each passed to mpirun as --mca <key> <value>.
	// +optional
	MCA map[string]string `json:"mca,omitempty"`
	// extraArgs are passed to mpirun before script.
	// +optional
	ExtraArgs []string `json:"extraArgs,omitempty"`
	// script is what every MPI process runs.
	// +optional
	Script []string `json:"script,omitempty"`
}

// MPISSHConfig is how the workers of an MPIJob run sshd.
type MPISSHConfig struct {
	// sshAuthMountPath is where the job's SSH key pair, authorized_keys and
	// client config are mounted in every pod. Defaults to /root/.ssh.
	// +optional
	// +kubebuilder:default="/root/.ssh"
	SSHAuthMountPath string `json:"sshAuthMountPath,omitempty"`
	// sshdPath is the absolute path of sshd in the worker image. Defaults to
	// /usr/sbin/sshd.
	// +optional
	SSHDPath string `json:"sshdPath,omitempty"`
}

// MPIRunPolicy governs an MPIJob as a whole.
type MPIRunPolicy struct {
	// cleanUpWorkers deletes the worker pods once the job finishes; the
	// launcher stays for its logs.
	// +optional
	CleanUpWorkers bool `json:"cleanUpWorkers,omitempty"`
}

// MPIJobSpec is the desired state of an MPIJob. It is written in one of two
// layouts, never both: worker, mca and mpiHome; or replicaSpecs and
// mpiConfig.
// +kubebuilder:validation:XValidation:rule="!(has(self.worker) && has(self.replicaSpecs))",message="spec.worker and spec.replicaSpecs are two layouts of one job: use one",fieldPath=".replicaSpecs"
// +kubebuilder:validation:XValidation:rule="has(self.worker) || has(self.replicaSpecs)",message="spec.worker or spec.replicaSpecs is required"
// +kubebuilder:validation:XValidation:rule="!(has(self.mpiConfig) && (has(self.worker) || has(self.mca) || has(self.mpiHome)))",message="spec.mpiConfig belongs to the replicaSpecs layout; with spec.worker use spec.mca, spec.mpiHome, spec.worker.cmd and spec.worker.extraMPIArgs",fieldPath=".mpiConfig"
// +kubebuilder:validation:XValidation:rule="!(has(self.replicaSpecs) && (has(self.mca) || has(self.mpiHome)))",message="spec.mca and spec.mpiHome belong to the worker layout; with spec.replicaSpecs use spec.mpiConfig",fieldPath=".replicaSpecs"
type MPIJobSpec struct {
	// worker is the workers, in the worker layout.
	// +optional
	Worker *MPIWorkerSpec `json:"worker,omitempty"`
	// mca are MCA parameters (worker layout), each passed to mpirun as
	// --mca <key> <value>, e.g. {btl: ^openib}.
	// +optional
	MCA map[string]string `json:"mca,omitempty"`
	// mpiHome is where Open MPI is installed (worker layout); passed to
	// mpirun as --prefix.
	// +optional
	MPIHome string `json:"mpiHome,omitempty"`
	// replicaSpecs are the launcher and the workers, in the replicaSpecs
	// layout.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=2
	ReplicaSpecs []MPIReplicaSpec `json:"replicaSpecs,omitempty"`
	// mpiConfig is how mpirun runs, in the replicaSpecs layout.
	// +optional
	MPIConfig *MPIConfig `json:"mpiConfig,omitempty"`
	// ssh is how the workers run sshd.
	// +optional
	SSH *MPISSHConfig `json:"ssh,omitempty"`
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

// MPIJob runs Open MPI programs: worker pods run sshd, and a launcher pod
// starts, once every worker is Ready, and runs mpirun against them over SSH
// with the job's key pair and hostfile. The launcher's exit decides the job.
type MPIJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MPIJobSpec `json:"spec"`
	// +optional
	Status JobStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// MPIJobList is a list of MPIJobs.
type MPIJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MPIJob `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &MPIJob{}, &MPIJobList{})
}
