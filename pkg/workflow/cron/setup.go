package cron

import (
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Options tunes the controller.
type Options struct {
	// Clock tells the time; nil means the real clock.
	Clock clock.Clock
}

// Setup runs the CronWorkflowRun controller on mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	return NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetScheme(),
		mgr.GetEventRecorder("cronworkflowrun-controller"), opts.Clock).SetupWithManager(mgr)
}
