// Package cacheselector builds the label selectors that restrict the
// controllers' informer caches to the objects the controllers label as
// their own, and the caches of those that build one of their own. It is a
// leaf that imports nothing of the project, and sits outside pkg/manager,
// so that both pkg/manager's cache options and the controllers, which
// pkg/manager imports, can use it without an import back into
// pkg/manager.
package cacheselector

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// HasLabel selects the objects that carry the label key, whatever its value.
func HasLabel(key string) labels.Selector {
	req, err := labels.NewRequirement(key, selection.Exists, nil)
	if err != nil {
		panic(err) // the controllers' label keys are constant and valid
	}
	return labels.NewSelector().Add(*req)
}

// NewCache returns an informer cache of the objects labelled with key,
// added to mgr so that it starts and stops with it. Objects a controller
// owns are kept without their managed fields (which no controller reads,
// and which an update without them leaves as they are); objects no
// controller owns, which a tenant labelled, as stubs (StubUncontrolled).
// name says whose cache it is in errors. opts may add per-object selectors
// or another transform; its scheme, mapper and default selector are set
// here.
func NewCache(mgr manager.Manager, name, key string, opts cache.Options) (cache.Cache, error) {
	opts.Scheme, opts.Mapper = mgr.GetScheme(), mgr.GetRESTMapper()
	opts.DefaultLabelSelector = HasLabel(key)
	if opts.DefaultTransform == nil {
		opts.DefaultTransform = StubUncontrolled(key)
	}
	c, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return nil, fmt.Errorf("creating the %s cache: %w", name, err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("adding the %s cache: %w", name, err)
	}
	return c, nil
}
