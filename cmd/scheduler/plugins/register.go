package plugins

import (
	"github.com/spf13/pflag"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
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
