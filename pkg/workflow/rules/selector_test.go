package rules

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	testCases := []struct {
		name     string
		selector string
		want     string // canonical form
	}{
		{name: "empty", selector: "", want: ""},
		{name: "blank", selector: " \t ", want: ""},
		{name: "greater without spaces", selector: "status.succeeded>0", want: "status.succeeded > 0"},
		{name: "greater with spaces", selector: "status.succeeded > 0", want: "status.succeeded > 0"},
		{name: "two requirements", selector: "status.succeeded > 0,status.failed == 0", want: "status.succeeded > 0,status.failed == 0"},
		{name: "spaces around comma", selector: " status.succeeded > 0 ,  status.failed == 0 ", want: "status.succeeded > 0,status.failed == 0"},
		{
			name:     "in and equals",
			selector: "status.phase in (Succeeded, Failed),status.workflowTemplateSpec.type == DAG",
			want:     "status.phase in (Succeeded,Failed),status.workflowTemplateSpec.type == DAG",
		},
		{name: "single equals", selector: "metadata.name=my-service", want: "metadata.name == my-service"},
		{name: "not equals", selector: "status.phase!=Failed", want: "status.phase != Failed"},
		{name: "less, negative float", selector: "status.loss < -0.25", want: "status.loss < -0.25"},
		{name: "exponent", selector: "status.x>1e3", want: "status.x > 1e3"},
		{name: "notin", selector: "status.phase notin (Failed)", want: "status.phase notin (Failed)"},
		{name: "in without space before paren", selector: "status.phase in(A,B)", want: "status.phase in (A,B)"},
		{name: "in with spaces inside parens", selector: "status.phase in ( A , B )", want: "status.phase in (A,B)"},
		{name: "in with an empty value", selector: "status.phase in (A,)", want: "status.phase in (A,)"},
		{name: "empty value", selector: "status.phase ==", want: "status.phase == "},
		{name: "empty value before comma", selector: "status.phase ==,status.x == 1", want: "status.phase == ,status.x == 1"},
		{name: "list index and label-like names", selector: "status.conditions.0.type == Ready,metadata.labels.app/name == x_y-z", want: "status.conditions.0.type == Ready,metadata.labels.app/name == x_y-z"},
		{name: "value with colon and dot", selector: "spec.image == ubuntu:22.04", want: "spec.image == ubuntu:22.04"},
		{name: "tab and newline", selector: "status.a\t==\tb,\nstatus.c==d", want: "status.a == b,status.c == d"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := Parse(tc.selector)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.selector, err)
			}
			if got := sel.String(); got != tc.want {
				t.Errorf("Parse(%q).String() = %q, want %q", tc.selector, got, tc.want)
			}
			if sel.Empty() != (tc.want == "") {
				t.Errorf("Parse(%q).Empty() = %v", tc.selector, sel.Empty())
			}
			// The canonical form parses to itself.
			again, err := Parse(sel.String())
			if err != nil {
				t.Fatalf("Parse(%q), the canonical form: %v", sel.String(), err)
			}
			if again.String() != sel.String() {
				t.Errorf("canonical form %q parses to %q", sel.String(), again.String())
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	testCases := []struct {
		name       string
		selector   string
		wantColumn int
		wantMsg    string // a substring of the message
	}{
		{name: "unclosed paren", selector: "status.phase in (Succeeded, Failed", wantColumn: 17, wantMsg: "'(' is never closed"},
		{name: "unclosed empty paren", selector: "status.phase in (", wantColumn: 17, wantMsg: "never closed"},
		{name: "close without open", selector: "status.phase == Failed)", wantColumn: 23, wantMsg: "')' without '('"},
		{name: "list after equals", selector: "status.phase == (a, b)", wantColumn: 17, wantMsg: "only in and notin take a list"},
		{name: "nested paren", selector: "status.phase in (a, (b))", wantColumn: 21, wantMsg: `unexpected '('`},
		{name: "in without paren", selector: "status.phase in Succeeded", wantColumn: 17, wantMsg: "expected '(' after in"},
		{name: "in at end", selector: "status.phase notin", wantColumn: 19, wantMsg: "expected '(' after notin, found the end"},
		{name: "empty list", selector: "status.phase in ()", wantColumn: 17, wantMsg: "empty list of values"},
		{name: "empty list with space", selector: "status.phase in ( )", wantColumn: 17, wantMsg: "empty list of values"},
		{name: "operator in list", selector: "status.phase in (a=b)", wantColumn: 19, wantMsg: `unexpected '='`},
		{name: "greater or equal", selector: "status.succeeded >= 1", wantColumn: 18, wantMsg: `unknown operator ">="`},
		{name: "triple equals", selector: "status.a === 1", wantColumn: 10, wantMsg: `unknown operator "==="`},
		{name: "bang", selector: "status.a ! 1", wantColumn: 10, wantMsg: `unknown operator "!"`},
		{name: "word operator", selector: "status.phase is Failed", wantColumn: 14, wantMsg: `unknown operator "is"`},
		{name: "capitalized in", selector: "status.phase In (A)", wantColumn: 14, wantMsg: `unknown operator "In"`},
		{name: "tilde operator", selector: "status.phase ~ A", wantColumn: 14, wantMsg: `unknown operator "~"`},
		{name: "missing operator", selector: "status.phase", wantColumn: 13, wantMsg: "missing operator after the field path \"status.phase\""},
		{name: "missing operator before comma", selector: "status.phase,status.x==1", wantColumn: 13, wantMsg: "missing operator"},
		{name: "empty path", selector: "== Succeeded", wantColumn: 1, wantMsg: "missing field path"},
		{name: "empty path after comma", selector: "status.a==1, >0", wantColumn: 14, wantMsg: "missing field path"},
		{name: "empty requirement", selector: "status.a==1,,status.b==2", wantColumn: 13, wantMsg: "empty requirement"},
		{name: "leading comma", selector: ",status.a==1", wantColumn: 1, wantMsg: "empty requirement"},
		{name: "trailing comma", selector: "status.a==1,", wantColumn: 13, wantMsg: "must follow the last ','"},
		{name: "trailing comma and space", selector: "status.a==1, ", wantColumn: 14, wantMsg: "must follow the last ','"},
		{name: "leading dot", selector: ".status.a == 1", wantColumn: 1, wantMsg: "empty segment"},
		{name: "double dot", selector: "status..a == 1", wantColumn: 8, wantMsg: "empty segment"},
		{name: "trailing dot", selector: "status. == 1", wantColumn: 8, wantMsg: "empty segment"},
		{name: "bad path character", selector: "status.a[0] == 1", wantColumn: 9, wantMsg: `invalid character '['`},
		{name: "greater needs a number", selector: "status.phase > high", wantColumn: 16, wantMsg: `">" compares numbers, and "high" is not one`},
		{name: "greater without value", selector: "status.succeeded >", wantColumn: 19, wantMsg: `missing number after ">"`},
		{name: "less than NaN", selector: "status.x < NaN", wantColumn: 12, wantMsg: "is not one"},
		{name: "less than Inf", selector: "status.x < Inf", wantColumn: 12, wantMsg: "is not one"},
		{name: "two words as value", selector: "status.message == all done", wantColumn: 23, wantMsg: `unexpected "done"`},
		{name: "missing comma", selector: "status.a == 1 status.b == 2", wantColumn: 15, wantMsg: "requirements are separated by ','"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.selector)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want an error", tc.selector)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) = %v (%T), want a *SyntaxError", tc.selector, err, err)
			}
			if se.Column != tc.wantColumn || !strings.Contains(se.Msg, tc.wantMsg) {
				t.Errorf("Parse(%q) = column %d: %s; want column %d: ...%s...", tc.selector, se.Column, se.Msg, tc.wantColumn, tc.wantMsg)
			}
			if se.Selector != tc.selector || !strings.Contains(err.Error(), tc.selector) {
				t.Errorf("error %q does not quote the selector %q", err, tc.selector)
			}
		})
	}
}

// decode returns the content of a JSON object as encoding/json decodes it:
// numbers are float64.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSelectorMatches(t *testing.T) {
	obj := decode(t, `{
		"metadata": {"name": "my-service", "labels": {"app/name": "web"}},
		"spec": {"replicas": 3, "paused": false, "ratio": 0.5, "big": 1e21, "tags": ["a", "b"], "one": ["a"], "obj": {"k": 1}, "empty": null},
		"status": {
			"phase": "Running",
			"succeeded": 1,
			"count": "12",
			"quantity": "1Gi",
			"conditions": [{"type": "Ready", "status": "True"}]
		}
	}`)
	testCases := []struct {
		selector string
		want     bool
	}{
		{"", true},
		{"metadata.name=my-service", true},
		{"metadata.name==my-service", true},
		{"metadata.name!=my-service", false},
		{"metadata.labels.app/name == web", true},
		{"status.phase in (Succeeded, Failed)", false},
		{"status.phase in (Running, Failed)", true},
		{"status.phase notin (Succeeded, Failed)", true},
		{"status.phase notin (Running)", false},
		// Numbers and bools compare as JSON writes them.
		{"spec.replicas == 3", true},
		{"spec.replicas == 3.0", false},
		{"spec.paused == false", true},
		{"spec.paused != true", true},
		{"spec.ratio == 0.5", true},
		{"spec.big == 1e+21", true},
		{`spec.one == ["a"]`, true},
		{`spec.obj == {"k":1}`, true},
		// > and < compare numbers.
		{"status.succeeded > 0", true},
		{"status.succeeded>1", false},
		{"status.succeeded < 2", true},
		{"status.succeeded < 1", false},
		{"spec.ratio > 0.25", true},
		{"spec.ratio < 0.25", false},
		{"spec.replicas > 2.5", true},
		{"status.count > 11", true},    // a string holding a number
		{"status.quantity > 0", false}, // a quantity is not a number
		{"status.phase > 0", false},
		{"spec.paused < 1", false},
		{"spec.tags > 0", false},
		// A missing or null field is "" and not a number.
		{"status.failed > 0", false},
		{"status.failed < 1", false},
		{"status.failed == 0", false},
		{"status.failed ==", true},
		{"status.failed != 0", true},
		{"status.failed notin (1, 2)", true},
		{"status.failed in (1, 2)", false},
		{"status.failed in (1, )", true},
		{"spec.empty ==", true},
		{"spec.empty > -1", false},
		{"spec.replicas.x == 1", false},
		{"spec.replicas.x != 1", true},
		{"metadata.name.first ==", true},
		// List indexes.
		{"status.conditions.0.type == Ready", true},
		{"status.conditions.1.type ==", true},
		{"status.conditions.x.type ==", true},
		{"spec.tags.1 == b", true},
		{"spec.tags.-1 == b", false},
		// Every requirement must hold.
		{"status.phase == Running,status.succeeded > 0", true},
		{"status.phase == Running,status.succeeded > 1", false},
		{"status.phase == Failed,status.succeeded > 0", false},
	}
	for _, tc := range testCases {
		t.Run(tc.selector, func(t *testing.T) {
			sel, err := Parse(tc.selector)
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.Matches(obj); got != tc.want {
				t.Errorf("Parse(%q).Matches = %v, want %v", tc.selector, got, tc.want)
			}
		})
	}
}

func TestNumbers(t *testing.T) {
	const big = int64(1) << 60 // not exact as a float64 neighbour
	obj := map[string]any{"a": big + 1, "i": 7, "i32": int32(-2), "u": uint64(1) << 63, "f32": float32(1.5), "n": json.Number("10"), "s": " 3 "}
	testCases := []struct {
		selector string
		want     bool
	}{
		{"a > 1152921504606846976", true}, // 1<<60: exact integer comparison
		{"a < 1152921504606846977", false},
		{"a == 1152921504606846977", true},
		{"i > 6", true},
		{"i == 7", true},
		{"i32 < -1", true},
		{"i32 == -2", true},
		{"u > 9e18", true},
		{"f32 > 1.4", true},
		{"f32 == 1.5", true},
		{"n > 9.5", true},
		{"n == 10", true},
		{"s > 2", true},
		{"s == 3", false}, // compared as the string " 3 "
	}
	for _, tc := range testCases {
		t.Run(tc.selector, func(t *testing.T) {
			sel, err := Parse(tc.selector)
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.Matches(obj); got != tc.want {
				t.Errorf("Parse(%q).Matches = %v, want %v", tc.selector, got, tc.want)
			}
		})
	}
}
