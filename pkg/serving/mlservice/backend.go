package mlservice

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Component is a predictor or transformer to run.
type Component struct {
	// Name of its objects.
	Name string
	// Labels of its objects; they hold LabelKey.
	Labels map[string]string
	// Template of its pods.
	Template corev1.PodTemplateSpec
	// MinReplicas and MaxReplicas bound its pods.
	MinReplicas, MaxReplicas int32
}

// ComponentState is the state of a component.
type ComponentState struct {
	// Ready is true while it serves.
	Ready bool
	// ReadyReplicas and TotalReplicas count its pods.
	ReadyReplicas, TotalReplicas int32
	// Reason and Message explain a component that is not ready.
	Reason, Message string
	// Target is where the router sends its requests.
	Target string
	// URL is the component's own URL, empty when the router serves it.
	URL string
}

// Backend runs the components of MLServices.
type Backend interface {
	// Name is raw or knative.
	Name() string
	// Ensure creates or updates the objects of c, controlled by owner, and
	// returns its state. It is idempotent.
	Ensure(ctx context.Context, owner client.Object, c Component) (ComponentState, error)
	// Prune deletes the components of owner (labelled LabelKey) whose
	// names are not in keep; it is not an error that none exist.
	Prune(ctx context.Context, owner client.Object, keep map[string]bool) error
}
