package filter

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
)

// gitlabDoc is the document of a GitLab merge request event, the seed's
// filter example.
func gitlabDoc(t *testing.T) []byte {
	t.Helper()
	h := http.Header{}
	h.Add("X-Gitlab-Event", "Merge Request Hook")
	h.Add("X-Gitlab-Event", "second value")
	h.Set("Content-Type", "application/json")
	h.Set("X-Retry", "3")
	h.Set("X-Draft", "true")
	body := `{
		"object_kind": "merge_request",
		"object_attributes": {"work_in_progress": false, "iid": 7, "title": "a.b"},
		"labels": [{"id": 219, "title": "bug"}, {"id": 3}],
		"count": "12",
		"nothing": null,
		"dotted.key": "yes",
		"flag": "true"
	}`
	doc, err := Document(h, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestDocument(t *testing.T) {
	h := http.Header{"X-A": {"1", "2"}, "X-Empty": {}}
	doc, err := Document(h, []byte(` {"a": [1, 2]} `))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"header":{"X-A":"1"},"body":{"a":[1,2]}}`; string(doc) != want {
		t.Errorf("Document = %s, want %s", doc, want)
	}
	if _, err := Document(h, []byte(`{"a":`)); err == nil {
		t.Error("Document accepted a body that is not JSON")
	}
	if doc, err := Document(nil, []byte(`"text"`)); err != nil || string(doc) != `{"header":{},"body":"text"}` {
		t.Errorf("Document of a JSON string = %s, %v", doc, err)
	}
	if doc, err := Document(http.Header{"X-A": {"<&>"}}, []byte(`{"html": "<b>&amp;</b>"}`)); err != nil || string(doc) != `{"header":{"X-A":"<&>"},"body":{"html":"<b>&amp;</b>"}}` {
		t.Errorf("Document of HTML = %s, %v, want it as it is", doc, err)
	}
}

func filter(path string, typ triggersv1beta1.JSONType, values ...string) triggersv1beta1.Filter {
	return triggersv1beta1.Filter{Path: path, Type: typ, Values: values}
}

func TestMatch(t *testing.T) {
	doc := gitlabDoc(t)
	const (
		b = triggersv1beta1.JSONBool
		n = triggersv1beta1.JSONNumber
		s = triggersv1beta1.JSONString
	)
	tests := []struct {
		name        string
		filters     []triggersv1beta1.Filter
		wantFailure *Failure
	}{
		{name: "no filters"},
		{
			name: "the seed's example",
			filters: []triggersv1beta1.Filter{
				filter("body.object_attributes.work_in_progress", b, "false"),
				filter("body.labels.0.id", n, "219", "3", "99"),
				filter("body.object_kind", s, "merge_request"),
			},
		},
		{name: "bool as 0", filters: []triggersv1beta1.Filter{filter("body.object_attributes.work_in_progress", b, "0")}},
		{name: "bool from a string", filters: []triggersv1beta1.Filter{filter("body.flag", b, "t")}},
		{name: "bool from a header", filters: []triggersv1beta1.Filter{filter("header.X-Draft", b, "TRUE")}},
		{name: "number as a float", filters: []triggersv1beta1.Filter{filter("body.labels.1.id", n, "3.0")}},
		{name: "number as an exponent", filters: []triggersv1beta1.Filter{filter("body.labels.0.id", n, "2.19e2")}},
		{name: "number from a string", filters: []triggersv1beta1.Filter{filter("body.count", n, "12")}},
		{name: "number from a header", filters: []triggersv1beta1.Filter{filter("header.X-Retry", n, "3")}},
		{name: "header, first value", filters: []triggersv1beta1.Filter{filter("header.X-Gitlab-Event", s, "Merge Request Hook")}},
		{name: "header name in any case", filters: []triggersv1beta1.Filter{filter("header.x-gitlab-EVENT", s, "Merge Request Hook")}},
		{name: "wildcard *", filters: []triggersv1beta1.Filter{filter("body.object_k*", s, "merge_request")}},
		{name: "wildcard ?", filters: []triggersv1beta1.Filter{filter("body.object_kin?", s, "merge_request")}},
		{name: "header wildcard", filters: []triggersv1beta1.Filter{filter("header.X-Gitlab-*", s, "Merge Request Hook")}},
		{name: "escaped dot", filters: []triggersv1beta1.Filter{filter(`body.dotted\.key`, s, "yes")}},
		{name: "one of several values", filters: []triggersv1beta1.Filter{filter("body.object_kind", s, "push", "merge_request")}},
		{
			name:        "wrong string",
			filters:     []triggersv1beta1.Filter{filter("body.object_kind", s, "push")},
			wantFailure: &Failure{Path: "body.object_kind", Reason: "the value is none of the filter's values"},
		},
		{
			name:        "strings compare as they are",
			filters:     []triggersv1beta1.Filter{filter("body.object_kind", s, "Merge_Request")},
			wantFailure: &Failure{Path: "body.object_kind", Reason: "the value is none of the filter's values"},
		},
		{
			name: "the first failing filter is named",
			filters: []triggersv1beta1.Filter{
				filter("body.object_kind", s, "merge_request"),
				filter("body.labels.0.id", n, "1"),
				filter("body.missing", s, "x"),
			},
			wantFailure: &Failure{Path: "body.labels.0.id", Reason: "the value is none of the filter's values"},
		},
		{
			name:        "missing path",
			filters:     []triggersv1beta1.Filter{filter("body.labels.5.id", n, "219")},
			wantFailure: &Failure{Path: "body.labels.5.id", Reason: "no value at the path"},
		},
		{
			name:        "missing header",
			filters:     []triggersv1beta1.Filter{filter("header.X-Github-Event", s, "push")},
			wantFailure: &Failure{Path: "header.X-Github-Event", Reason: "no value at the path"},
		},
		{
			name:        "null",
			filters:     []triggersv1beta1.Filter{filter("body.nothing", s, "")},
			wantFailure: &Failure{Path: "body.nothing", Reason: "no value at the path"},
		},
		{
			name:        "a number is not a string",
			filters:     []triggersv1beta1.Filter{filter("body.labels.0.id", s, "219")},
			wantFailure: &Failure{Path: "body.labels.0.id", Reason: "the value is not a string"},
		},
		{
			name:        "a string that is not a number",
			filters:     []triggersv1beta1.Filter{filter("body.object_kind", n, "1")},
			wantFailure: &Failure{Path: "body.object_kind", Reason: "the value is not a number"},
		},
		{
			name:        "an object is not a bool",
			filters:     []triggersv1beta1.Filter{filter("body.object_attributes", b, "true")},
			wantFailure: &Failure{Path: "body.object_attributes", Reason: "the value is not a bool"},
		},
		{
			name:        "wrong bool",
			filters:     []triggersv1beta1.Filter{filter("body.object_attributes.work_in_progress", b, "true")},
			wantFailure: &Failure{Path: "body.object_attributes.work_in_progress", Reason: "the value is none of the filter's values"},
		},
		{
			name:        "a value that does not parse matches nothing",
			filters:     []triggersv1beta1.Filter{filter("body.labels.0.id", n, "two hundred")},
			wantFailure: &Failure{Path: "body.labels.0.id", Reason: "the value is none of the filter's values"},
		},
		{
			name:        "unknown type",
			filters:     []triggersv1beta1.Filter{filter("body.object_kind", "regexp", ".*")},
			wantFailure: &Failure{Path: "body.object_kind", Reason: `unknown filter type "regexp"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, failure := Match(doc, tt.filters)
			if ok != (tt.wantFailure == nil) {
				t.Errorf("Match = %v, want %v", ok, tt.wantFailure == nil)
			}
			if diff := cmp.Diff(tt.wantFailure, failure); diff != "" {
				t.Errorf("failure (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNormalizePath(t *testing.T) {
	tests := []struct{ path, want string }{
		{"header.x-github-event", "header.X-Github-Event"},
		{"header.X-GitHub-Event", "header.X-Github-Event"},
		{"header.x-github-*", "header.X-Github-*"},
		{`header.x-a\.b.c`, `header.X-A\.b.c`},
		{"header.content-type.0", "header.Content-Type.0"},
		{"body.x-github-event", "body.x-github-event"},
		{"headers.x", "headers.x"},
	}
	for _, tt := range tests {
		if got := NormalizePath(tt.path); got != tt.want {
			t.Errorf("NormalizePath(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestValidatePath(t *testing.T) {
	tests := []struct {
		path    string
		wantErr bool
	}{
		{path: "body.a"},
		{path: "body.labels.0.id"},
		{path: "header.X-Github-Event"},
		{path: `body.a\.b`},
		{path: `body.a\\`},
		{path: "body.*"},
		{path: "body", wantErr: true},
		{path: "body.", wantErr: true},
		{path: "body..a", wantErr: true},
		{path: "header.", wantErr: true},
		{path: "headers.a", wantErr: true},
		{path: "labels.0.id", wantErr: true},
		{path: `body.a\`, wantErr: true},
		{path: "", wantErr: true},
	}
	for _, tt := range tests {
		if err := ValidatePath(tt.path); (err != nil) != tt.wantErr {
			t.Errorf("ValidatePath(%q) = %v, want error %v", tt.path, err, tt.wantErr)
		}
	}
}

func TestValidateValue(t *testing.T) {
	tests := []struct {
		typ     triggersv1beta1.JSONType
		value   string
		wantErr bool
	}{
		{typ: triggersv1beta1.JSONBool, value: "false"},
		{typ: triggersv1beta1.JSONBool, value: "1"},
		{typ: triggersv1beta1.JSONBool, value: "yes", wantErr: true},
		{typ: triggersv1beta1.JSONNumber, value: "219"},
		{typ: triggersv1beta1.JSONNumber, value: "-1.5e3"},
		{typ: triggersv1beta1.JSONNumber, value: "", wantErr: true},
		{typ: triggersv1beta1.JSONNumber, value: "0x", wantErr: true},
		{typ: triggersv1beta1.JSONString, value: ""},
		{typ: triggersv1beta1.JSONString, value: "anything"},
		{typ: "regexp", value: "x", wantErr: true},
	}
	for _, tt := range tests {
		if err := ValidateValue(tt.typ, tt.value); (err != nil) != tt.wantErr {
			t.Errorf("ValidateValue(%s, %q) = %v, want error %v", tt.typ, tt.value, err, tt.wantErr)
		}
	}
}
