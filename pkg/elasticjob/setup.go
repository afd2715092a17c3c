package elasticjob

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
	"github.com/accelstack/accelstack/pkg/cacheselector"
)

// Options configures the ElasticJob controller.
type Options struct {
	// MasterImage is the image of master pods whose template names none;
	// empty means DefaultMasterImage.
	MasterImage string
	// Workers is the number of jobs reconciled at once; 0 means 4.
	Workers int
}

// Setup runs, on mgr, the ElasticJob controller and the validating webhooks
// of ElasticJobs and ScalePlans. The controller watches the jobs' pods and
// Services through a cache of its own, of the objects labelled with a job
// name.
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.Workers == 0 {
		opts.Workers = 4
	}
	c, err := cacheselector.NewCache(mgr, "ElasticJob", elasticv1alpha1.JobNameLabelKey, cache.Options{})
	if err != nil {
		return err
	}
	r := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorder("elasticjob-controller"), opts.MasterImage)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("elasticjob").
		For(&elasticv1alpha1.ElasticJob{}).
		Watches(&elasticv1alpha1.ScalePlan{}, handler.EnqueueRequestsFromMapFunc(planOwnerRequest)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Workers})
	for _, o := range []client.Object{&corev1.Pod{}, &corev1.Service{}} {
		b = b.WatchesRawSource(source.Kind(c, o,
			handler.TypedEnqueueRequestForOwner[client.Object](mgr.GetScheme(), mgr.GetRESTMapper(), &elasticv1alpha1.ElasticJob{}, handler.OnlyControllerOwner())))
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("setting up the ElasticJob controller: %w", err)
	}
	decoder := admission.NewDecoder(mgr.GetScheme())
	srv := mgr.GetWebhookServer()
	srv.Register(ValidatePath("ElasticJob"), &admission.Webhook{Handler: &jobValidator{decoder: decoder}})
	srv.Register(ValidatePath("ScalePlan"), &admission.Webhook{Handler: &planValidator{decoder: decoder, reader: mgr.GetAPIReader()}})
	return nil
}

// planOwnerRequest maps a ScalePlan to the job it scales.
func planOwnerRequest(_ context.Context, o client.Object) []reconcile.Request {
	plan, ok := o.(*elasticv1alpha1.ScalePlan)
	if !ok || PlanOwner(plan) == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: plan.Namespace, Name: PlanOwner(plan)}}}
}
