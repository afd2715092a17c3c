// Package reclaim is the Resource Keeper: in the namespaces that opt in, it
// probes the activity of Notebooks, TensorBoards and Explorers (Jupyter's
// API, the activity sidecar, SSH sessions, GPU utilization in the node
// agent's metrics), sets their Idle condition and suspends those idle for
// too long, recording each decision with its evidence.
package reclaim

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// Options configures the Resource Keeper.
type Options struct{}

// Setup runs the Resource Keeper on mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	return nil
}
