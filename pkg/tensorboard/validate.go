package tensorboard

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/tensorboard/logdir"
)

// specPath is the path of a TensorBoard's spec.
var specPath = field.NewPath("spec")

// Validate returns what is wrong with a TensorBoard: its locations of logs
// (logdir.Validate) and its queue.
func Validate(tb *tensorstackv1beta1.TensorBoard) field.ErrorList {
	errs := logdir.Validate(&tb.Spec, specPath)
	return append(errs, interactive.ValidateScheduler(tb.Spec.Scheduler, specPath.Child("scheduler"))...)
}

// ValidateUpdate is Validate, except that a TensorBoard whose locations of
// logs do not change is admitted: a suspend or resume of one admitted while
// the webhook was down is never refused.
func ValidateUpdate(tb, old *tensorstackv1beta1.TensorBoard) field.ErrorList {
	if equality.Semantic.DeepEqual(tb.Spec.TrainingLogFilesets, old.Spec.TrainingLogFilesets) &&
		equality.Semantic.DeepEqual(tb.Spec.LogDir, old.Spec.LogDir) &&
		equality.Semantic.DeepEqual(tb.Spec.Scheduler, old.Spec.Scheduler) {
		return nil
	}
	return Validate(tb)
}
