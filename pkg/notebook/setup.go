// Package notebook is the Notebook controller: a StatefulSet of one pod
// from the Notebook's template behind the activity sidecar, its Service, the
// SSH Service, suspend and resume, and the Notebook's status.
package notebook

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// DefaultActivityImage is the image of the activity sidecar.
const DefaultActivityImage = "ghcr.io/accelstack/activity-proxy:latest"

// Options configures the controller.
type Options struct {
	// ActivityImage runs the activity sidecar; empty means DefaultActivityImage.
	ActivityImage string
}

// Setup runs the Notebook controller and its webhook on mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	return nil
}
