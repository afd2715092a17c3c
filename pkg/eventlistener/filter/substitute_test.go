package filter

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

func TestSubstitute(t *testing.T) {
	doc := gitlabDoc(t)
	tests := []struct {
		name, in, want string
	}{
		{name: "string", in: "$(body.object_kind)", want: "merge_request"},
		{name: "number", in: "$(body.labels.0.id)", want: "219"},
		{name: "bool", in: "$(body.object_attributes.work_in_progress)", want: "false"},
		{name: "object as compact JSON", in: "$(body.labels.1)", want: `{"id":3}`},
		{name: "header", in: "$(header.X-Gitlab-Event)", want: "Merge Request Hook"},
		{name: "header in any case", in: "$(header.x-gitlab-event)", want: "Merge Request Hook"},
		{name: "in text", in: "kind=$(body.object_kind), id=$(body.labels.0.id)!", want: "kind=merge_request, id=219!"},
		{name: "missing is empty", in: "[$(body.missing.key)]", want: "[]"},
		{name: "null is empty", in: "[$(body.nothing)]", want: "[]"},
		{name: "escaped dot", in: `$(body.dotted\.key)`, want: "yes"},
		{name: "wildcard", in: "$(body.object_k*)", want: "merge_request"},
		{name: "a value with dots", in: "$(body.object_attributes.title)", want: "a.b"},
		{name: "other variables are kept", in: "$(params.x) $(workflow.name) $(body)", want: "$(params.x) $(workflow.name) $(body)"},
		{name: "no nesting", in: "$(body.$(body.object_kind))", want: "$(body.merge_request)"},
		{name: "unclosed", in: "$(body.object_kind", want: "$(body.object_kind"},
		{name: "plain", in: "hello", want: "hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Substitute(doc, tt.in); got != tt.want {
				t.Errorf("Substitute(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSubstituteIsNotReevaluated(t *testing.T) {
	doc, err := Document(nil, []byte(`{"a": "$(body.b)", "b": "secret"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := Substitute(doc, "$(body.a)"); got != "$(body.b)" {
		t.Errorf("a value holding a reference became %q, want it kept as it is", got)
	}
}

func TestSubstituteParams(t *testing.T) {
	doc, err := Document(nil, []byte(`{"hello": "world", "test": {"boolT": true, "numberT": 1.5, "stringT": "s"}}`))
	if err != nil {
		t.Fatal(err)
	}
	in := []batchv1beta1.Param{
		{Name: "message", Value: "$(body.hello)"},
		{Name: "bool-name", Value: "$(body.test.boolT)"},
		{Name: "number-name", Value: "$(body.test.numberT)"},
		{Name: "string-name", Value: "$(body.test.stringT)"},
		{Name: "fixed", Value: "v"},
	}
	want := []batchv1beta1.Param{
		{Name: "message", Value: "world"},
		{Name: "bool-name", Value: "true"},
		{Name: "number-name", Value: "1.5"},
		{Name: "string-name", Value: "s"},
		{Name: "fixed", Value: "v"},
	}
	got := SubstituteParams(doc, in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SubstituteParams (-want +got):\n%s", diff)
	}
	if in[0].Value != "$(body.hello)" {
		t.Error("SubstituteParams changed its argument")
	}
	if SubstituteParams(doc, nil) != nil {
		t.Error("SubstituteParams(nil) is not nil")
	}
}

func TestRefs(t *testing.T) {
	got := Refs("a $(body.x.y) b $(header.X-A) $(params.p) $(body.)")
	want := []string{"body.x.y", "header.X-A", "body."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Refs (-want +got):\n%s", diff)
	}
}
