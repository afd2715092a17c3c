// Package eventlistener is the controller of EventListeners and
// WorkflowTriggers: a Deployment and Service of the listener server per
// EventListener, a Deployment of the trigger server per WorkflowTrigger, and
// their Ready conditions and addresses.
package eventlistener

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// DefaultImage is the image of the listener and trigger servers.
const DefaultImage = "ghcr.io/accelstack/workflow-events:latest"

// Options configures the controller.
type Options struct {
	// Image runs the listener and trigger servers; empty means DefaultImage.
	Image string
	// ExternalHost is the host an ingress serves listeners at, for
	// status.address.url; empty leaves the url empty.
	ExternalHost string
}

// Setup runs the EventListener and WorkflowTrigger controllers on mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	return nil
}
