package cron

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

func TestValidate(t *testing.T) {
	testCases := []struct {
		name string
		edit func(*batchv1beta1.CronWorkflowRun)
		// want are "field: type" of the errors.
		want []string
	}{
		{name: "valid", edit: func(*batchv1beta1.CronWorkflowRun) {}},
		{name: "valid in full", edit: func(c *batchv1beta1.CronWorkflowRun) {
			c.Spec.Schedule, c.Spec.ConcurrencyPolicy = "@hourly", batchv1beta1.ReplaceConcurrent
			c.Spec.StartingDeadlineSeconds = ptr.To[int64](0)
			c.Spec.SuccessfulRunsHistoryLimit, c.Spec.FailedRunsHistoryLimit = ptr.To[int32](0), ptr.To[int32](10)
			c.Spec.WorkflowRun.Metadata.Labels = map[string]string{"example.com/team": "vision"}
			c.Name = strings.Repeat("a", MaxNameLength)
		}},
		{name: "bad schedule", edit: func(c *batchv1beta1.CronWorkflowRun) { c.Spec.Schedule = "every minute" },
			want: []string{"spec.schedule: Invalid value"}},
		{name: "empty schedule", edit: func(c *batchv1beta1.CronWorkflowRun) { c.Spec.Schedule = "" },
			want: []string{"spec.schedule: Invalid value"}},
		{name: "name too long for its runs", edit: func(c *batchv1beta1.CronWorkflowRun) { c.Name = strings.Repeat("a", MaxNameLength+1) },
			want: []string{"metadata.name: Too long"}},
		{name: "unknown policy", edit: func(c *batchv1beta1.CronWorkflowRun) { c.Spec.ConcurrencyPolicy = "Queue" },
			want: []string{"spec.concurrencyPolicy: Unsupported value"}},
		{name: "negative numbers", edit: func(c *batchv1beta1.CronWorkflowRun) {
			c.Spec.StartingDeadlineSeconds = ptr.To[int64](-1)
			c.Spec.SuccessfulRunsHistoryLimit, c.Spec.FailedRunsHistoryLimit = ptr.To[int32](-1), ptr.To[int32](-2)
		}, want: []string{
			"spec.startingDeadlineSeconds: Invalid value", "spec.successfulRunsHistoryLimit: Invalid value", "spec.failedRunsHistoryLimit: Invalid value",
		}},
		{name: "bad template labels and annotations", edit: func(c *batchv1beta1.CronWorkflowRun) {
			c.Spec.WorkflowRun.Metadata.Labels = map[string]string{"team": "not a value"}
			c.Spec.WorkflowRun.Metadata.Annotations = map[string]string{"not/a/key": "x"}
		}, want: []string{"spec.workflowRun.metadata.labels: Invalid value", "spec.workflowRun.metadata.annotations: Invalid value"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			c := makeCron().Obj()
			tc.edit(c)
			var got []string
			for _, e := range Validate(c) {
				got = append(got, e.Field+": "+e.Type.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}
