// Package api registers every accelstack API group version with a scheme.
package api

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
	mindxdlv1 "github.com/accelstack/accelstack/api/mindxdl/v1"
	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
)

// AddToScheme adds all accelstack API types to s.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		tensorstackv1beta1.AddToScheme,
		tensorstackv1beta2.AddToScheme,
		triggersv1beta1.AddToScheme,
		batchv1beta1.AddToScheme,
		schedulerv1beta1.AddToScheme,
		mindxdlv1.AddToScheme,
		elasticv1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// MustAddToScheme is AddToScheme that panics on error, for package init.
func MustAddToScheme(s *runtime.Scheme) {
	utilruntime.Must(AddToScheme(s))
}
