package rules

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// content returns obj as unstructured content, as the controller gets it.
func content(t *testing.T, obj runtime.Object) map[string]any {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func fieldRules(s string) *batchv1beta1.Rules { return &batchv1beta1.Rules{FieldSelector: s} }

func condRules(typ string, status corev1.ConditionStatus) *batchv1beta1.Rules {
	return &batchv1beta1.Rules{ConditionSelector: &batchv1beta1.ConditionSelector{Type: typ, Status: status}}
}

func TestMatchesBatchJob(t *testing.T) {
	job := func(succeeded, failed int32, conds ...batchv1.JobCondition) map[string]any {
		return content(t, &batchv1.Job{
			TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
			ObjectMeta: metav1.ObjectMeta{Name: "pi-job-x7k2p", Namespace: "demo"},
			Status:     batchv1.JobStatus{Succeeded: succeeded, Failed: failed, Conditions: conds},
		})
	}
	// The rules of the seed's example.
	success, failure := fieldRules("status.succeeded > 0"), fieldRules("status.failed > 3")
	complete := batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}
	failedCond := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}
	testCases := []struct {
		name                     string
		obj                      map[string]any
		wantSuccess, wantFailure bool
	}{
		// status.succeeded and status.failed are omitted while 0.
		{name: "just created", obj: job(0, 0)},
		{name: "one failure", obj: job(0, 1)},
		{name: "succeeded after retries", obj: job(1, 2, complete), wantSuccess: true},
		{name: "failed for good", obj: job(0, 4, failedCond), wantFailure: true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				rules *batchv1beta1.Rules
				want  bool
			}{
				{success, tc.wantSuccess},
				{failure, tc.wantFailure},
				{condRules("Complete", corev1.ConditionTrue), tc.wantSuccess},
				{condRules("Failed", corev1.ConditionTrue), tc.wantFailure},
			} {
				got, err := Matches(tc.obj, c.rules)
				if err != nil {
					t.Fatal(err)
				}
				if got != c.want {
					t.Errorf("Matches(%+v) = %v, want %v", c.rules, got, c.want)
				}
			}
		})
	}
}

func TestMatchesT9kJob(t *testing.T) {
	job := func(phase batchv1beta1.JobPhase, conds ...batchv1beta1.JobCondition) map[string]any {
		return content(t, &batchv1beta1.MPIJob{
			TypeMeta:   metav1.TypeMeta{APIVersion: "batch.tensorstack.dev/v1beta1", Kind: "MPIJob"},
			ObjectMeta: metav1.ObjectMeta{Name: "mpi", Namespace: "demo"},
			Status: batchv1beta1.JobStatus{
				Phase:      phase,
				Conditions: conds,
				Aggregate:  batchv1beta1.Aggregate{Running: 2},
			},
		})
	}
	success, failure, ok := ForT9kJob(schema.GroupKind{Group: "batch.tensorstack.dev", Kind: "MPIJob"})
	if !ok {
		t.Fatal("ForT9kJob(MPIJob) gives no rules")
	}
	testCases := []struct {
		phase                    batchv1beta1.JobPhase
		wantSuccess, wantFailure bool
	}{
		{phase: ""},
		{phase: batchv1beta1.JobPending},
		{phase: batchv1beta1.JobRunning},
		{phase: batchv1beta1.JobPaused},
		{phase: batchv1beta1.JobSucceeded, wantSuccess: true},
		{phase: batchv1beta1.JobFailed, wantFailure: true},
		{phase: batchv1beta1.JobUnknown},
	}
	for _, tc := range testCases {
		t.Run(string(tc.phase), func(t *testing.T) {
			obj := job(tc.phase)
			if got, err := Matches(obj, success); err != nil || got != tc.wantSuccess {
				t.Errorf("success rules match = %v, %v; want %v", got, err, tc.wantSuccess)
			}
			if got, err := Matches(obj, failure); err != nil || got != tc.wantFailure {
				t.Errorf("failure rules match = %v, %v; want %v", got, err, tc.wantFailure)
			}
		})
	}

	// The condition example of the seed, with both selectors set.
	obj := job(batchv1beta1.JobSucceeded,
		batchv1beta1.JobCondition{Type: batchv1beta1.JobRunningCond, Status: corev1.ConditionFalse},
		batchv1beta1.JobCondition{Type: batchv1beta1.JobCompleted, Status: corev1.ConditionTrue})
	both := &batchv1beta1.Rules{
		FieldSelector:     "status.phase == Succeeded,status.aggregate.running > 1",
		ConditionSelector: &batchv1beta1.ConditionSelector{Type: "Completed", Status: corev1.ConditionTrue},
	}
	if got, err := Matches(obj, both); err != nil || !got {
		t.Errorf("Matches(both selectors hold) = %v, %v; want true", got, err)
	}
	both.ConditionSelector.Type = "Failed"
	if got, err := Matches(obj, both); err != nil || got {
		t.Errorf("Matches(condition does not hold) = %v, %v; want false", got, err)
	}
	both.ConditionSelector.Type = "Completed"
	both.FieldSelector = "status.phase == Succeeded,status.aggregate.running > 2"
	if got, err := Matches(obj, both); err != nil || got {
		t.Errorf("Matches(fieldSelector does not hold) = %v, %v; want false", got, err)
	}
}

func TestMatchesWorkflowRun(t *testing.T) {
	run := content(t, &batchv1beta1.WorkflowRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch.tensorstack.dev/v1beta1", Kind: "WorkflowRun"},
		ObjectMeta: metav1.ObjectMeta{Name: "dag-run", Namespace: "demo"},
		Status: batchv1beta1.WorkflowRunStatus{
			WorkflowRunStatusFields: batchv1beta1.WorkflowRunStatusFields{
				Phase:                batchv1beta1.NodeSucceeded,
				Message:              "All nodes in DAG have succeeded",
				WorkflowTemplateSpec: &batchv1beta1.WorkflowTemplateSpec{Type: batchv1beta1.WorkflowTemplateTypeDAG},
				Nodes: map[string]batchv1beta1.NodeStatus{
					"first-add": {WorkflowRunName: "dag-run-first-add-abcde", Phase: batchv1beta1.NodeSucceeded},
				},
				Results:    []batchv1beta1.WorkflowRunResult{{Name: "sum", Value: "6"}},
				Conditions: []batchv1beta1.WorkflowRunCondition{{Type: batchv1beta1.WorkflowRunCompleted, Status: corev1.ConditionTrue}},
			},
		},
	})
	testCases := []struct {
		rules *batchv1beta1.Rules
		want  bool
	}{
		{fieldRules("status.phase in (Succeeded, Failed),status.workflowTemplateSpec.type == DAG"), true},
		{fieldRules("status.phase in (Succeeded, Failed),status.workflowTemplateSpec.type == SeqPod"), false},
		{fieldRules("status.nodes.first-add.phase == Succeeded"), true},
		{fieldRules("status.results.0.value > 5"), true},
		{fieldRules("status.results.0.value > 6"), false},
		{fieldRules("metadata.name = dag-run"), true},
		{condRules("Completed", corev1.ConditionTrue), true},
		{condRules("Completed", corev1.ConditionFalse), false},
		{condRules("Running", corev1.ConditionTrue), false},
		{nil, false},
		{&batchv1beta1.Rules{}, false},
		{fieldRules("   "), false},
	}
	for _, tc := range testCases {
		got, err := Matches(run, tc.rules)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("Matches(%+v) = %v, want %v", tc.rules, got, tc.want)
		}
	}
}

func TestMatchesCondition(t *testing.T) {
	obj := decode(t, `{"status": {"conditions": [
		"not an object",
		{"type": "Ready"},
		{"type": "Ready", "status": true},
		{"type": "Available", "status": "False"},
		{"type": "Progressing", "status": "True"}
	]}}`)
	testCases := []struct {
		sel  batchv1beta1.ConditionSelector
		want bool
	}{
		{batchv1beta1.ConditionSelector{Type: "Progressing", Status: corev1.ConditionTrue}, true},
		{batchv1beta1.ConditionSelector{Type: "Available", Status: corev1.ConditionFalse}, true},
		{batchv1beta1.ConditionSelector{Type: "Available", Status: corev1.ConditionTrue}, false},
		{batchv1beta1.ConditionSelector{Type: "progressing", Status: corev1.ConditionTrue}, false},
		{batchv1beta1.ConditionSelector{Type: "Ready", Status: corev1.ConditionTrue}, false},
		{batchv1beta1.ConditionSelector{Type: "Missing", Status: corev1.ConditionUnknown}, false},
	}
	for _, tc := range testCases {
		if got := MatchesCondition(obj, tc.sel); got != tc.want {
			t.Errorf("MatchesCondition(%+v) = %v, want %v", tc.sel, got, tc.want)
		}
	}
	for _, o := range []string{`{}`, `{"status": null}`, `{"status": {"conditions": {"type": "Ready"}}}`, `{"status": "x"}`} {
		if MatchesCondition(decode(t, o), batchv1beta1.ConditionSelector{Type: "Ready", Status: corev1.ConditionTrue}) {
			t.Errorf("MatchesCondition(%s) = true, want false", o)
		}
	}
}

func TestMatchesSyntaxError(t *testing.T) {
	_, err := Matches(map[string]any{}, fieldRules("status.phase in (Succeeded"))
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("Matches with an invalid selector = %v, want a *SyntaxError", err)
	}
}

func TestValidate(t *testing.T) {
	path := field.NewPath("spec", "resource", "successRules")
	testCases := []struct {
		name  string
		rules *batchv1beta1.Rules
		want  field.ErrorList
	}{
		{name: "nil", rules: nil},
		{name: "field selector", rules: fieldRules("status.succeeded > 0")},
		{name: "condition selector", rules: condRules("Ready", corev1.ConditionUnknown)},
		{
			name:  "empty",
			rules: &batchv1beta1.Rules{},
			want:  field.ErrorList{field.Required(path, "fieldSelector or conditionSelector is required")},
		},
		{
			name:  "bad selector",
			rules: fieldRules("status.succeeded >= 1"),
			want: field.ErrorList{field.Invalid(path.Child("fieldSelector"), "status.succeeded >= 1",
				`column 18: unknown operator ">=" (the operators are ==, =, !=, >, <, in and notin)`)},
		},
		{
			name:  "bad condition selector",
			rules: condRules("", "Yes"),
			want: field.ErrorList{
				field.Required(path.Child("conditionSelector", "type"), ""),
				field.NotSupported(path.Child("conditionSelector", "status"), corev1.ConditionStatus("Yes"),
					[]corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}),
			},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := Validate(tc.rules, path)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
	// The webhook's message names the field and says where the error is.
	msg := Validate(fieldRules("status.phase in (A"), path).ToAggregate().Error()
	for _, want := range []string{"spec.resource.successRules.fieldSelector", "column 17", "never closed"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Validate message %q lacks %q", msg, want)
		}
	}
}

func TestForT9kJob(t *testing.T) {
	// Every T9k Job type of a WorkflowTemplate has rules.
	for _, typ := range []batchv1beta1.WorkflowTemplateType{
		batchv1beta1.WorkflowTemplateTypeGenericJob, batchv1beta1.WorkflowTemplateTypeTensorFlowTrainingJob,
		batchv1beta1.WorkflowTemplateTypePyTorchTrainingJob, batchv1beta1.WorkflowTemplateTypeXGBoostTrainingJob,
		batchv1beta1.WorkflowTemplateTypeColossalAIJob, batchv1beta1.WorkflowTemplateTypeDeepSpeedJob,
		batchv1beta1.WorkflowTemplateTypeMPIJob, batchv1beta1.WorkflowTemplateTypeBeamJob,
	} {
		success, failure, ok := ForT9kJob(batchv1beta1.GroupVersion.WithKind(string(typ)).GroupKind())
		if !ok {
			t.Errorf("ForT9kJob(%s) gives no rules", typ)
			continue
		}
		if diff := cmp.Diff(fieldRules("status.phase == Succeeded"), success); diff != "" {
			t.Errorf("ForT9kJob(%s) success (-want +got):\n%s", typ, diff)
		}
		if diff := cmp.Diff(fieldRules("status.phase == Failed"), failure); diff != "" {
			t.Errorf("ForT9kJob(%s) failure (-want +got):\n%s", typ, diff)
		}
		if errs := append(Validate(success, field.NewPath("s")), Validate(failure, field.NewPath("f"))...); len(errs) > 0 {
			t.Errorf("ForT9kJob(%s) rules are invalid: %v", typ, errs)
		}
	}
	// The BeamJob's own phases end the same way.
	beam := content(t, &batchv1beta1.BeamJob{Status: batchv1beta1.BeamJobStatus{Phase: batchv1beta1.BeamJobSucceeded}})
	success, _, _ := ForT9kJob(schema.GroupKind{Group: "batch.tensorstack.dev", Kind: "BeamJob"})
	if got, err := Matches(beam, success); err != nil || !got {
		t.Errorf("a Succeeded BeamJob does not match its success rules: %v, %v", got, err)
	}
	// Each call returns rules of its own.
	a, _, _ := ForT9kJob(schema.GroupKind{Group: "batch.tensorstack.dev", Kind: "GenericJob"})
	a.FieldSelector = "changed"
	if b, _, _ := ForT9kJob(schema.GroupKind{Group: "batch.tensorstack.dev", Kind: "GenericJob"}); b.FieldSelector == "changed" {
		t.Error("ForT9kJob returns shared rules")
	}

	for _, gk := range []schema.GroupKind{
		{Group: "kubeflow.org", Kind: "MPIJob"},
		{Group: "kubeflow.org", Kind: "PyTorchJob"},
		{Group: "batch", Kind: "Job"},
		{Group: "batch.tensorstack.dev", Kind: "WorkflowRun"},
		{Group: "batch.tensorstack.dev", Kind: "mpijob"},
		{Group: "", Kind: "GenericJob"},
	} {
		if s, f, ok := ForT9kJob(gk); ok || s != nil || f != nil {
			t.Errorf("ForT9kJob(%v) = %v, %v, %v; want no rules", gk, s, f, ok)
		}
	}
}
