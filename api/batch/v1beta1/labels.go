package v1beta1

// The labels the jobs engine puts on the pods and Services of a T9k Job,
// by which clients find a replica's pod.
const (
	// JobNameLabel is the name of the job an object belongs to.
	JobNameLabel = "batch.tensorstack.dev/job-name"
	// ReplicaTypeLabel is the replica type of a pod or Service.
	ReplicaTypeLabel = "batch.tensorstack.dev/replica-type"
	// ReplicaIndexLabel is the rank of a pod or Service within its type.
	ReplicaIndexLabel = "batch.tensorstack.dev/replica-index"
)
