package jobs

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/accelstack/accelstack/pkg/cacheselector"
)

// Options tunes the engine.
type Options struct {
	// Workers is the number of jobs of each kind reconciled at once; 0 means 4.
	Workers int
}

// Setup runs, on mgr, a reconciler and a validating webhook for each kind.
// The kinds share one cache of the objects labelled with a job name (pods,
// Services, ConfigMaps, PodGroups, dependents), apart from the manager's;
// of those nothing owns it holds stubs (cacheselector.StubUncontrolled).
func Setup(mgr ctrl.Manager, kinds []Kind, opts Options) error {
	if opts.Workers == 0 {
		opts.Workers = 4
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultLabelSelector: CacheSelector(),
		DefaultTransform:     cacheselector.StubUncontrolled(JobNameLabel),
	})
	if err != nil {
		return fmt.Errorf("creating the jobs cache: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return fmt.Errorf("adding the jobs cache: %w", err)
	}
	for _, o := range []client.Object{&corev1.Pod{}, &corev1.Service{}} {
		if err := c.IndexField(context.Background(), o, ownerIndex, indexOwner); err != nil {
			return fmt.Errorf("indexing %T by owner: %w", o, err)
		}
	}
	deleted, waits := newDeletedPods(), newAddressWaits()
	for _, k := range kinds {
		if err := setupKind(mgr, c, k, deleted, waits, opts); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", k.Component(), err)
		}
	}
	return nil
}

func setupKind(mgr ctrl.Manager, c cache.Cache, k Kind, deleted *deletedPods, waits *addressWaits, opts Options) error {
	gvk, err := apiutil.GVKForObject(k.NewObject(), mgr.GetScheme())
	if err != nil {
		return err
	}
	r := &Reconciler{
		kind:         k,
		client:       mgr.GetClient(),
		apiReader:    mgr.GetAPIReader(),
		cache:        c,
		scheme:       mgr.GetScheme(),
		recorder:     mgr.GetEventRecorder(k.Component() + "-controller"),
		deleted:      deleted,
		addressWaits: waits,
	}
	owned := []client.Object{&corev1.Pod{}, &corev1.Service{}}
	if d, ok := k.(Dependents); ok {
		owned = append(owned, d.Owns()...)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(k.Component()).
		For(k.NewObject()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Workers})
	for _, o := range owned {
		b = b.WatchesRawSource(source.Kind(c, o,
			handler.TypedEnqueueRequestForOwner[client.Object](mgr.GetScheme(), mgr.GetRESTMapper(), k.NewObject(), handler.OnlyControllerOwner())))
	}
	if err := b.Complete(r); err != nil {
		return err
	}
	mgr.GetWebhookServer().Register(ValidatePath(gvk), newValidatingWebhook(k, schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}, mgr.GetScheme()))
	return nil
}

// indexOwner returns the UID of o's controlling owner.
func indexOwner(o client.Object) []string {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return []string{string(ref.UID)}
		}
	}
	return nil
}
