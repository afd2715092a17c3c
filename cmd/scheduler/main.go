// Command scheduler is the T9k Scheduler, t9k-scheduler: kube-scheduler
// built with the T9k plugins (queue sort, queue admission, gang scheduling,
// queue preemption). It takes every kube-scheduler flag and a standard
// KubeSchedulerConfiguration (--config) whose profile enables the plugins
// by name; deploy/scheduler has the one accelstack installs.
package main

import (
	"fmt"
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/accelstack/accelstack/cmd/scheduler/plugins"
)

func main() {
	cmd := app.NewSchedulerCommand(plugins.Options()...)
	if err := plugins.SetDefaultFeatureGates(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	plugins.AddFlags(cmd.Flags())
	os.Exit(cli.Run(cmd))
}
