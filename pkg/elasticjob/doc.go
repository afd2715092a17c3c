// Package elasticjob runs DLRover ElasticJobs (elastic.iml.github.io/v1alpha1)
// and executes their ScalePlans.
//
// For each job the reconciler creates DLRover's job master pod and Service
// when spec.replicaSpecs names a dlrover-master, and the task pods (ps,
// worker, chief, evaluator) with one Service per rank: first as many as the
// replica specs ask for, then as each ScalePlan says, whether DLRover's
// master (scale-type auto) or a user (scale-type manual) wrote it. A
// TaskManager per task type does the pod work, as DLRover's operator does:
// ReconcilePods executes a plan, HandleFaultPods relaunches a failed or
// evicted pod as a new pod of the same rank whose restart-count label is one
// higher, up to the type's restartCount, StopRunningPods deletes the pods
// still running when the job ends, and SyncJobState counts the pods into the
// job's status. The master pod, when there is one, decides the job's
// outcome; without it the chief, or else the workers, do.
//
// Task pods get DLRover's environment in DLRover's order (DLROVER_MASTER_ADDR
// when there is a master, WORKER_TYPE, WORKER_ID, WORKER_RANK,
// GRPC_ENABLE_FORK_SUPPORT, POD_NAME, WORKER_NUM for workers) and, by the
// distribution strategy, TF_CONFIG (see InsertTfConfigToEnv) or
// RDZV_ENDPOINT.
//
// A validating webhook refuses ElasticJobs that cannot run and ScalePlans
// that name a replica type the job does not have, naming the field.
package elasticjob
