package plugins

import (
	"fmt"

	"github.com/spf13/pflag"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/pkg/features"
)

// Options registers every T9k plugin with the scheduler command; the list
// is explicit, and a profile enables them by these names.
func Options() []app.Option {
	return []app.Option{
		app.WithPlugin(QueueSortName, NewQueueSort),
		app.WithPlugin(QueueName, NewQueue),
		app.WithPlugin(GangName, NewGang),
		app.WithPlugin(PreemptionName, NewPreemption),
	}
}

// AddFlags adds the T9k plugins' own flags to the scheduler command.
func AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&gangTimeout, "gang-timeout", DefaultGangTimeout,
		"How long the reserved pods of an incomplete PodGroup wait for the rest before every reservation is released.")
}

// DefaultFeatureGates are the kube-scheduler feature gates whose default the
// T9k Scheduler changes; --feature-gates still sets them.
//
// NominatedNodeNameForExpectation (on by default since Kubernetes 1.35)
// writes status.nominatedNodeName to every pod that is about to wait at
// Permit, before the wait: one more API write for each member of a gang
// but the last. Each member's bind also waits for that write, so once the
// gang is complete its members bind seconds apart on a busy API server.
// Nothing in accelstack reads the field, so it is off.
var DefaultFeatureGates = map[string]bool{string(features.NominatedNodeNameForExpectation): false}

// SetDefaultFeatureGates applies DefaultFeatureGates; call it before the
// command parses its flags, so that --feature-gates overrides them. A gate
// that already has its T9k default at the version the binary emulates is
// left alone: a build stamped with an older version may not know the gate
// yet, and setting it there is an error.
func SetDefaultFeatureGates() error {
	changed := map[string]bool{}
	for name, on := range DefaultFeatureGates {
		if utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name)) != on {
			changed[name] = on
		}
	}
	if len(changed) == 0 {
		return nil
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(changed); err != nil {
		return fmt.Errorf("default feature gates: %w", err)
	}
	return nil
}
