// Package colossalai is the ColossalAIJob kind: worker pods run sshd with
// the job's key pair; once every worker is Ready, a launcher pod runs
// `colossalai run` against the workers' hostfile, which starts torchrun on
// each over SSH in the launcher's working directory. No pod is recreated (a
// restarted worker cannot rejoin); the launcher's failure fails the job.
//
// ColossalAIJob is written in two layouts, which View maps onto one:
//
//	launcher layout (seed)             replicaSpecs layout
//	spec.launcher{image, workingDir,   replicaSpecs[type=launcher] (may be {})
//	  env, resources}
//	spec.worker.replicas, template     replicaSpecs[type=worker]
//	spec.worker.procPerWorker          spec.torchConfig.procPerWorker
//	spec.worker.command                spec.torchConfig.script
//	spec.worker.torchArgs              spec.torchConfig.extraArgs
//	spec.ssh.authMountPath, sshdPath   (the same)
package colossalai

// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=colossalaijobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=colossalaijobs/status,verbs=get;update;patch
