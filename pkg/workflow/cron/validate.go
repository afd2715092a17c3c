package cron

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// MaxNameLength is the longest name of a CronWorkflowRun: its runs are
// named <name>-<Unix seconds> (11 characters more until the year 5138) and
// carry the name as a label value, and the run's name goes into label
// values of what the run creates, which are at most 63 characters.
const MaxNameLength = 63 - 11

// Validate checks what is particular to a CronWorkflowRun: its name leaves
// room for its runs' names, the schedule parses (ParseSchedule), the
// concurrency policy is known, the starting deadline and history limits are
// not negative, and the run template's labels and annotations are valid.
// The template's spec is a WorkflowRunSpec and is validated as WorkflowRuns
// are, by the caller. The errors name the fields (spec.schedule, ...).
func Validate(c *batchv1beta1.CronWorkflowRun) field.ErrorList {
	var errs field.ErrorList
	if len(c.Name) > MaxNameLength {
		errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), c.Name, MaxNameLength))
	}
	spec := field.NewPath("spec")
	if _, err := ParseSchedule(c.Spec.Schedule); err != nil {
		errs = append(errs, field.Invalid(spec.Child("schedule"), c.Spec.Schedule, err.Error()))
	}
	switch c.Spec.ConcurrencyPolicy {
	case "", batchv1beta1.AllowConcurrent, batchv1beta1.ForbidConcurrent, batchv1beta1.ReplaceConcurrent:
	default:
		errs = append(errs, field.NotSupported(spec.Child("concurrencyPolicy"), c.Spec.ConcurrencyPolicy,
			[]batchv1beta1.ConcurrencyPolicy{batchv1beta1.AllowConcurrent, batchv1beta1.ForbidConcurrent, batchv1beta1.ReplaceConcurrent}))
	}
	if d := c.Spec.StartingDeadlineSeconds; d != nil && *d < 0 {
		errs = append(errs, field.Invalid(spec.Child("startingDeadlineSeconds"), *d, "must be greater than or equal to 0"))
	}
	if l := c.Spec.SuccessfulRunsHistoryLimit; l != nil && *l < 0 {
		errs = append(errs, field.Invalid(spec.Child("successfulRunsHistoryLimit"), *l, "must be greater than or equal to 0"))
	}
	if l := c.Spec.FailedRunsHistoryLimit; l != nil && *l < 0 {
		errs = append(errs, field.Invalid(spec.Child("failedRunsHistoryLimit"), *l, "must be greater than or equal to 0"))
	}
	meta := spec.Child("workflowRun", "metadata")
	errs = append(errs, metav1validation.ValidateLabels(c.Spec.WorkflowRun.Metadata.Labels, meta.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(c.Spec.WorkflowRun.Metadata.Annotations, meta.Child("annotations"))...)
	return errs
}
