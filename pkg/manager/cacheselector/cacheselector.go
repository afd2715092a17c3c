// Package cacheselector builds the label selectors that restrict the
// controllers' informer caches to the objects the controllers label as
// their own. It is a leaf, apart from pkg/manager, so that both the
// manager's cache options and the controllers that build caches of their
// own can use it.
package cacheselector

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// HasLabel selects the objects that carry the label key, whatever its value.
func HasLabel(key string) labels.Selector {
	req, err := labels.NewRequirement(key, selection.Exists, nil)
	if err != nil {
		panic(err) // the controllers' label keys are constant and valid
	}
	return labels.NewSelector().Add(*req)
}
