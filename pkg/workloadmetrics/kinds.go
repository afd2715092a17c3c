package workloadmetrics

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/accelstack/accelstack/pkg/jobkind"
)

// Kind says where one workload kind keeps the state the metrics export.
type Kind struct {
	// GVK is the kind.
	GVK schema.GroupVersionKind
	// Job marks the job kinds, which have a phase but no readiness.
	Job bool
	// PhasePath is the field holding the phase.
	PhasePath []string
	// PausedPath is a boolean field that is true while the workload is
	// paused or suspended; empty means none.
	PausedPath []string
	// PausedCondition is a condition type that is True while the workload
	// is paused; empty means none.
	PausedCondition string
	// RunningPhase is the phase that means ready when the workload has no
	// Ready condition.
	RunningPhase string
}

// tensorstack is the group version of the platform's other workloads.
var tensorstack = schema.GroupVersion{Group: "tensorstack.dev", Version: "v1beta1"}

// Kinds returns every workload kind the metrics cover: the job kinds of
// jobKinds that have a phase (jobkind.Info.PhasePath), in their order, then
// Notebooks, TensorBoards, SimpleMLServices and MLServices.
func Kinds(jobKinds []jobkind.Info) []Kind {
	var kinds []Kind
	for _, j := range jobKinds {
		if j.PhasePath == nil {
			continue
		}
		kinds = append(kinds, Kind{GVK: j.GVK, Job: true, PhasePath: j.PhasePath, PausedPath: j.PausedPath})
	}
	return append(kinds,
		Kind{GVK: tensorstack.WithKind("Notebook"), PhasePath: []string{"status", "phase"}, PausedPath: []string{"spec", "suspend"}, RunningPhase: "Running"},
		Kind{GVK: tensorstack.WithKind("TensorBoard"), PhasePath: []string{"status", "phase"}, PausedPath: []string{"spec", "suspend"}, RunningPhase: "Running"},
		Kind{GVK: tensorstack.WithKind("SimpleMLService"), PhasePath: []string{"status", "phase"}},
		Kind{GVK: tensorstack.WithKind("MLService"), PhasePath: []string{"status", "phase"}, PausedCondition: "Paused"},
	)
}
