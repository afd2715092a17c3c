package v1alpha1

// Labels, annotations and names DLRover uses on ElasticJobs, ScalePlans and
// the objects the controller creates.
const (
	// AppLabelKey is set to AppLabelValue on every pod and Service of a job.
	AppLabelKey = "app"
	// AppLabelValue is the value of AppLabelKey.
	AppLabelValue = "dlrover"
	// JobNameLabelKey names the job of a pod, Service or ScalePlan.
	JobNameLabelKey = "elasticjob.dlrover/name"
	// LegacyJobNameLabelKey names the job of a ScalePlan in DLRover's
	// older samples.
	LegacyJobNameLabelKey = "elasticjob-name"
	// ReplicaTypeLabelKey is the replica type of a pod or Service.
	ReplicaTypeLabelKey = "elasticjob.dlrover/replica-type"
	// ReplicaIndexLabelKey is the id of a pod.
	ReplicaIndexLabelKey = "elasticjob.dlrover/replica-index"
	// RankIndexLabelKey is the rank of a task pod.
	RankIndexLabelKey = "elasticjob.dlrover/rank-index"
	// RestartCountLabelKey counts how many times the rank of a task pod was
	// relaunched before it.
	RestartCountLabelKey = "restart-count"
	// ScaleTypeLabelKey says who wrote a ScalePlan: ScaleTypeAuto or
	// ScaleTypeManual.
	ScaleTypeLabelKey = "scale-type"
	// ScaleTypeAuto marks ScalePlans DLRover's master writes.
	ScaleTypeAuto = "auto"
	// ScaleTypeManual marks ScalePlans users write.
	ScaleTypeManual = "manual"
)
