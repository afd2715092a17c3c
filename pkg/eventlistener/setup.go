package eventlistener

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/cacheselector"
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

// Setup runs the EventListener and WorkflowTrigger controllers on mgr. They
// read their Deployments and Services through a cache of their own, of
// the objects labelled with WorkflowEventsLabelKey, rather than the
// manager's.
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.Image == "" {
		opts.Image = DefaultImage
	}
	c, err := cacheselector.NewCache(mgr, "workflow events", WorkflowEventsLabelKey, cache.Options{})
	if err != nil {
		return err
	}
	owned := []client.Object{&appsv1.Deployment{}, &corev1.Service{}}

	lr := NewListenerReconciler(mgr.GetClient(), c, mgr.GetAPIReader(), mgr.GetEventRecorder("eventlistener-controller"), opts)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("eventlistener").
		For(&triggersv1beta1.EventListener{}).
		Watches(&triggersv1beta1.WorkflowTrigger{}, handler.EnqueueRequestsFromMapFunc(lr.triggerListeners))
	for _, o := range owned {
		b = b.WatchesRawSource(source.Kind(c, o,
			handler.TypedEnqueueRequestForOwner[client.Object](mgr.GetScheme(), mgr.GetRESTMapper(), &triggersv1beta1.EventListener{}, handler.OnlyControllerOwner())))
	}
	if err := b.Complete(lr); err != nil {
		return fmt.Errorf("setting up the EventListener controller: %w", err)
	}

	tr := NewTriggerReconciler(mgr.GetClient(), c, mgr.GetAPIReader(), mgr.GetEventRecorder("workflowtrigger-controller"), opts)
	b = ctrl.NewControllerManagedBy(mgr).
		Named("workflowtrigger").
		For(&triggersv1beta1.WorkflowTrigger{}).
		Watches(&triggersv1beta1.EventListener{}, handler.EnqueueRequestsFromMapFunc(tr.listenerTriggers)).
		// The runs it created, for its history limit.
		Owns(&batchv1beta1.WorkflowRun{})
	for _, o := range append(owned, &networkingv1.NetworkPolicy{}) {
		b = b.WatchesRawSource(source.Kind(c, o,
			handler.TypedEnqueueRequestForOwner[client.Object](mgr.GetScheme(), mgr.GetRESTMapper(), &triggersv1beta1.WorkflowTrigger{}, handler.OnlyControllerOwner())))
	}
	if err := b.Complete(tr); err != nil {
		return fmt.Errorf("setting up the WorkflowTrigger controller: %w", err)
	}
	return nil
}
