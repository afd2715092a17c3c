// Package mpijob is the MPIJob kind: worker pods run sshd with the job's
// key pair; once every worker is Ready, a launcher pod runs mpirun against
// the workers' hostfile over SSH, and its exit decides the job.
//
// MPIJob is written in two layouts, which View maps onto one:
//
//	worker layout (seed)             replicaSpecs layout
//	spec.worker.replicas, template   replicaSpecs[type=worker]
//	container mpi-worker             container worker
//	(launcher from worker template)  replicaSpecs[type=launcher] (may be {})
//	spec.worker.cmd                  spec.mpiConfig.script
//	spec.worker.extraMPIArgs         spec.mpiConfig.extraArgs
//	spec.mca, spec.mpiHome           spec.mpiConfig.mca, .home
//	spec.worker.processesPerWorker   (slots from the worker's resources)
//	spec.worker.processRecovery      (none)
//
// processesPerWorker is each worker's slots in the hostfile; processRecovery
// adds --enable-recovery --max-restarts <limit> to mpirun, which then
// restarts a failed MPI process in place. Pods are never recreated in the
// worker layout.
package mpijob

// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=mpijobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=mpijobs/status,verbs=get;update;patch
