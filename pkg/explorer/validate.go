package explorer

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
)

var specPath = field.NewPath("spec")

// Validate returns what is wrong with an Explorer: a storage type other
// than pvc, a storage name that cannot name a PVC, or an invalid queue.
func Validate(ex *tensorstackv1beta1.Explorer) field.ErrorList {
	var errs field.ErrorList
	if t := ex.Spec.StorageType; t != "" && t != tensorstackv1beta1.StorageTypePVC {
		errs = append(errs, field.NotSupported(specPath.Child("storageType"), t, []tensorstackv1beta1.StorageType{tensorstackv1beta1.StorageTypePVC}))
	}
	p := specPath.Child("storageName")
	if ex.Spec.StorageName == "" {
		errs = append(errs, field.Required(p, "the name of a PVC"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(ex.Spec.StorageName) {
			errs = append(errs, field.Invalid(p, ex.Spec.StorageName, msg))
		}
	}
	return append(errs, interactive.ValidateScheduler(ex.Spec.Scheduler, specPath.Child("scheduler"))...)
}

// ValidateUpdate is Validate, except that an Explorer whose storage and
// scheduler do not change is admitted: a suspend or resume of one admitted
// while the webhook was down is never refused.
func ValidateUpdate(ex, old *tensorstackv1beta1.Explorer) field.ErrorList {
	if ex.Spec.StorageType == old.Spec.StorageType && ex.Spec.StorageName == old.Spec.StorageName &&
		equality.Semantic.DeepEqual(ex.Spec.Scheduler, old.Spec.Scheduler) {
		return nil
	}
	return Validate(ex)
}
