package beamjob

import (
	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobkind"
)

// Info registers the BeamJob kind (jobkind.Info). A controller of its own
// runs it, on the Flink operator, so the queue admission webhook does not
// check it: the Flink cluster's pods are held to their queue by the pod
// webhook and the scheduler.
var Info = jobkind.Info{
	GVK:           batchv1beta1.GroupVersion.WithKind("BeamJob"),
	Resource:      "beamjobs",
	WorkflowField: "beamJob",
	PhasePath:     []string{"status", "phase"},
	PausedPath:    []string{"spec", "runMode", "pause", "enabled"},
}
