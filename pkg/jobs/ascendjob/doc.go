// Package ascendjob runs Huawei MindX DL's AscendJob (mindxdl.gitee.com/v1)
// on the jobs engine: the replica types of each framework, the variables
// ascend-operator sets in the container named ascend (rank, world size,
// leader address), the leader's ClusterIP Service, the scheduler the job
// names, the rank table of the file-based launch, and Kubeflow-shaped
// status conditions beside the engine's own.
package ascendjob
