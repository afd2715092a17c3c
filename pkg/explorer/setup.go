// Package explorer is the Explorer controller: a file browser and
// code-server on a PVC, each a pod behind the activity sidecar with its
// Service, suspend and resume, and the Explorer's status.
package explorer

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// The default images of the sub-workloads.
const (
	DefaultFileBrowserImage = "filebrowser/filebrowser:v2.30.0"
	DefaultCodeServerImage  = "codercom/code-server:4.23.1"
)

// Options configures the controller.
type Options struct {
	// FileBrowserImage and CodeServerImage run the two sub-workloads.
	FileBrowserImage, CodeServerImage string
	// ActivityImage runs the activity sidecar.
	ActivityImage string
}

// Setup runs the Explorer controller on mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	return nil
}
