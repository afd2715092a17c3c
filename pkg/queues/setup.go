package queues

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/accelstack/accelstack/pkg/jobs"
)

// Setup runs, on mgr, the PodGroup and Queue status controllers (the
// latter enforcing maxDuration) and serves the admission webhooks of pods
// (PodPath) and of the T9k Jobs of jobKinds (JobPath), and the webhook
// that marks the workloads of queue grant holders (GrantPath). The T9k Scheduler's
// pods are watched in a cache of their own, apart from the manager's.
func Setup(mgr ctrl.Manager, jobKinds []jobs.Kind) error {
	ctx := context.Background()
	pods, err := newPodCache(ctx, mgr.GetConfig(), cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("creating the T9k Scheduler pod cache: %w", err)
	}
	if err := mgr.Add(pods); err != nil {
		return fmt.Errorf("adding the T9k Scheduler pod cache: %w", err)
	}
	if err := indexGroups(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	m := &members{pods: pods, groups: mgr.GetClient()}
	if err := (&podGroupReconciler{client: mgr.GetClient(), members: m}).setup(mgr, pods); err != nil {
		return fmt.Errorf("setting up the PodGroup status controller: %w", err)
	}
	qr := &queueReconciler{client: mgr.GetClient(), members: m, recorder: mgr.GetEventRecorder("queue-controller")}
	if err := qr.setup(mgr, pods); err != nil {
		return fmt.Errorf("setting up the Queue status controller: %w", err)
	}

	kinds := map[schema.GroupKind]jobs.Kind{}
	for _, k := range jobKinds {
		gvk, err := apiutil.GVKForObject(k.NewObject(), mgr.GetScheme())
		if err != nil {
			return err
		}
		kinds[gvk.GroupKind()] = k
	}
	a := &admitter{client: mgr.GetClient(), apiReader: mgr.GetAPIReader(), members: m, caches: []cache.Cache{mgr.GetCache(), pods}}
	decoder := admission.NewDecoder(mgr.GetScheme())
	srv := mgr.GetWebhookServer()
	srv.Register(PodPath, &admission.Webhook{Handler: &podValidator{admitter: a, jobKinds: kinds, decoder: decoder}})
	srv.Register(JobPath, &admission.Webhook{Handler: &jobValidator{admitter: a, jobKinds: kinds, decoder: decoder}})
	srv.Register(GrantPath, &admission.Webhook{Handler: &grantMarker{admitter: a, jobKinds: kinds, reviews: mgr.GetClient(), decoder: decoder}})
	return nil
}
