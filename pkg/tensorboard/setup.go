// Package tensorboard is the TensorBoard controller: a pod serving
// TensorBoard over logs in PVCs, S3 and HTTP behind the activity sidecar,
// its Service, suspend and resume, and the TensorBoard's status.
package tensorboard

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// DefaultImage runs TensorBoard when a TensorBoard names no image.
const DefaultImage = "tensorflow/tensorflow:2.14.0"

// Options configures the controller.
type Options struct {
	// Image runs TensorBoard when a TensorBoard names none.
	Image string
	// ActivityImage runs the activity sidecar.
	ActivityImage string
}

// Setup runs the TensorBoard controller and its webhook on mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	return nil
}
