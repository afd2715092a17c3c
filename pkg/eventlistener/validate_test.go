package eventlistener

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
)

// seedTrigger is the seed's trigger with filters and params.
func seedTrigger() *triggersv1beta1.WorkflowTrigger {
	return &triggersv1beta1.WorkflowTrigger{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "filter-workflow-trigger-sample"},
		Spec: triggersv1beta1.WorkflowTriggerSpec{
			EventSources: []triggersv1beta1.EventSource{{
				EventListenerName: "event-listener-sample",
				Filters: []triggersv1beta1.Filter{
					{Path: "body.object_attributes.work_in_progress", Type: triggersv1beta1.JSONBool, Values: []string{"false"}},
					{Path: "body.labels.0.id", Type: triggersv1beta1.JSONNumber, Values: []string{"219", "3", "99"}},
					{Path: "body.object_kind", Type: triggersv1beta1.JSONString, Values: []string{"merge_request"}},
					{Path: "header.X-Github-Event", Type: triggersv1beta1.JSONString, Values: []string{"push"}},
				},
			}},
			ServiceAccountName: "managed-project-sa",
			WorkflowRunSpec: batchv1beta1.WorkflowRunSpec{
				WorkflowTemplateRef: "workflow-template-sample",
				Params:              []batchv1beta1.Param{{Name: "message", Value: "$(body.hello) $(header.X-A)"}},
			},
		},
	}
}

func TestValidateTrigger(t *testing.T) {
	tests := []struct {
		name   string
		change func(*triggersv1beta1.WorkflowTrigger)
		want   []string // "field: type"
	}{
		{name: "the seed's", change: func(*triggersv1beta1.WorkflowTrigger) {}},
		{
			name:   "no event source",
			change: func(wt *triggersv1beta1.WorkflowTrigger) { wt.Spec.EventSources = nil },
			want:   []string{"spec.eventSources: Required value"},
		},
		{
			name: "bad listener names",
			change: func(wt *triggersv1beta1.WorkflowTrigger) {
				wt.Spec.EventSources = append(wt.Spec.EventSources,
					triggersv1beta1.EventSource{EventListenerName: "Bad_Name"},
					triggersv1beta1.EventSource{},
					triggersv1beta1.EventSource{EventListenerName: "event-listener-sample"})
			},
			want: []string{
				"spec.eventSources[1].eventListenerName: Invalid value",
				"spec.eventSources[2].eventListenerName: Required value",
				"spec.eventSources[3].eventListenerName: Duplicate value",
			},
		},
		{
			name: "bad filters",
			change: func(wt *triggersv1beta1.WorkflowTrigger) {
				f := wt.Spec.EventSources[0].Filters
				f[0].Values = []string{"false", "nope"}
				f[1].Values = []string{"1e3", "x"}
				f[2].Path = "object_kind"
				f[3].Path = "header."
				f[3].Values = nil
			},
			want: []string{
				"spec.eventSources[0].filters[0].values[1]: Invalid value",
				"spec.eventSources[0].filters[1].values[1]: Invalid value",
				"spec.eventSources[0].filters[2].path: Invalid value",
				"spec.eventSources[0].filters[3].path: Invalid value",
				"spec.eventSources[0].filters[3].values: Required value",
			},
		},
		{
			name: "bad reference",
			change: func(wt *triggersv1beta1.WorkflowTrigger) {
				wt.Spec.WorkflowRunSpec.Params[0].Value = "$(body.) $(params.x)"
			},
			want: []string{"spec.workflowRunSpec.params[0].value: Invalid value"},
		},
		{
			name:   "bad service account",
			change: func(wt *triggersv1beta1.WorkflowTrigger) { wt.Spec.ServiceAccountName = "No" },
			want:   []string{"spec.serviceAccountName: Invalid value"},
		},
		{
			name: "too large",
			change: func(wt *triggersv1beta1.WorkflowTrigger) {
				wt.Spec.WorkflowRunSpec.Params = append(wt.Spec.WorkflowRunSpec.Params, batchv1beta1.Param{Name: "big", Value: strings.Repeat("x", MaxTriggerConfigBytes)})
			},
			want: []string{"spec: Too long"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wt := seedTrigger()
			tt.change(wt)
			var got []string
			for _, e := range ValidateTrigger(wt) {
				got = append(got, e.Field+": "+e.Type.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, ValidateTrigger(wt))
			}
		})
	}
}
