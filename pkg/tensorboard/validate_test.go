package tensorboard

import (
	"testing"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// TestValidateQueue: a TensorBoard for the T9k Scheduler names its queue.
func TestValidateQueue(t *testing.T) {
	tb := &tensorstackv1beta1.TensorBoard{Spec: tensorstackv1beta1.TensorBoardSpec{
		TrainingLogFilesets: []string{"t9k://pvc/logs/run"},
		Scheduler:           &tensorstackv1beta1.SchedulePolicy{T9kScheduler: &tensorstackv1beta1.T9kScheduler{}},
	}}
	errs := Validate(tb)
	if len(errs) != 1 || errs[0].Field != "spec.scheduler.t9kScheduler.queue" {
		t.Errorf("got %v, want spec.scheduler.t9kScheduler.queue required", errs)
	}
}

// TestValidateUpdate: an update that leaves the locations alone is
// admitted even when they are invalid (a suspend by the Resource Keeper).
func TestValidateUpdate(t *testing.T) {
	old := &tensorstackv1beta1.TensorBoard{Spec: tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{"nfs://x"}}}
	tb := old.DeepCopy()
	tb.Spec.Suspend = true
	if errs := ValidateUpdate(tb, old); len(errs) > 0 {
		t.Errorf("suspend refused: %v", errs)
	}
	tb.Spec.TrainingLogFilesets = []string{"nfs://y"}
	if errs := ValidateUpdate(tb, old); len(errs) == 0 {
		t.Error("a new invalid location admitted")
	}
}
