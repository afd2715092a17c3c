package workloadmetrics

import "k8s.io/apimachinery/pkg/runtime/schema"

// Kind says where one workload kind keeps the state the metrics export.
type Kind struct {
	// GVK is the kind.
	GVK schema.GroupVersionKind
	// Job marks the T9k Job kinds, which have a phase but no readiness.
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

// Group versions of the kinds.
var (
	batch       = schema.GroupVersion{Group: "batch.tensorstack.dev", Version: "v1beta1"}
	tensorstack = schema.GroupVersion{Group: "tensorstack.dev", Version: "v1beta1"}
)

// JobKinds are the T9k Job kinds.
var JobKinds = []string{
	"GenericJob", "PyTorchTrainingJob", "TensorFlowTrainingJob", "XGBoostTrainingJob",
	"MPIJob", "DeepSpeedJob", "ColossalAIJob", "BeamJob",
}

// Kinds returns every workload kind the metrics cover.
func Kinds() []Kind {
	var kinds []Kind
	for _, k := range JobKinds {
		kinds = append(kinds, Kind{
			GVK: batch.WithKind(k), Job: true, PhasePath: []string{"status", "phase"},
			PausedPath: []string{"spec", "runMode", "pause", "enabled"},
		})
	}
	return append(kinds,
		Kind{GVK: tensorstack.WithKind("Notebook"), PhasePath: []string{"status", "phase"}, PausedPath: []string{"spec", "suspend"}, RunningPhase: "Running"},
		Kind{GVK: tensorstack.WithKind("TensorBoard"), PhasePath: []string{"status", "phase"}, PausedPath: []string{"spec", "suspend"}, RunningPhase: "Running"},
		Kind{GVK: tensorstack.WithKind("SimpleMLService"), PhasePath: []string{"status", "phase"}},
		Kind{GVK: tensorstack.WithKind("MLService"), PhasePath: []string{"status", "phase"}, PausedCondition: "Paused"},
	)
}
