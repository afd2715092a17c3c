package workflow

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

func TestVariablesReplace(t *testing.T) {
	v := Variables{"params.msg": "hi $(params.other)", "params.other": "x", "templates.a.results.r": "heads"}
	for in, want := range map[string]string{
		"echo $(params.msg)":                 "echo hi $(params.other)", // values are not substituted again
		"$(templates.a.results.r)-$(x.y)":    "heads-$(x.y)",
		"no vars":                            "no vars",
		"$(params.missing) $(params.other)":  "$(params.missing) x",
		"$(params.other)$(params.other)$(me": "xx$(me",
	} {
		if got, err := v.Replace(in, "f"); err != nil || got != want {
			t.Errorf("Replace(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
}

func TestReplaceAllKeepsStructure(t *testing.T) {
	ps := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Args: []string{"$(params.a)"}, Env: []corev1.EnvVar{{Name: "E", Value: "$(params.a)"}}}}}
	v := Variables{"params.a": `"}], "hostNetwork": true, "x": [{"`}
	if err := v.ReplaceAll(ps, "spec.pod"); err != nil {
		t.Fatal(err)
	}
	if ps.HostNetwork || ps.Containers[0].Args[0] != v["params.a"] || ps.Containers[0].Env[0].Value != v["params.a"] {
		t.Fatalf("substitution changed the structure: %+v", ps)
	}
}

func TestResultReference(t *testing.T) {
	if n, r, ok := ResultReference("templates.first-add.results.sum"); !ok || n != "first-add" || r != "sum" {
		t.Errorf("got %q %q %v", n, r, ok)
	}
	for _, bad := range []string{"params.a", "templates..results.x", "templates.a.results.", "templates.a.result.x"} {
		if _, _, ok := ResultReference(bad); ok {
			t.Errorf("ResultReference(%q) accepted", bad)
		}
	}
}

func node(name string, deps ...string) batchv1beta1.DAGNode {
	return batchv1beta1.DAGNode{Name: name, WorkflowTemplateRef: "t", Dependencies: deps}
}

func TestDependenciesImplicit(t *testing.T) {
	n := node("c", "a")
	n.Params = []batchv1beta1.Param{{Name: "p", Value: "$(templates.b.results.sum) and $(templates.a.results.x)"}}
	n.When = []batchv1beta1.WhenExpression{{Input: "$(templates.d.results.coin)", Operator: batchv1beta1.WhenIn, Values: []string{"$(templates.e.results.y)"}}}
	if got := strings.Join(Dependencies(&n), ","); got != "a,b,d,e" {
		t.Errorf("Dependencies = %s, want a,b,d,e", got)
	}
}

func TestValidateGraph(t *testing.T) {
	cyc := node("c", "b")
	cyc.When = []batchv1beta1.WhenExpression{{Input: "$(templates.e.results.r)", Operator: batchv1beta1.WhenIn, Values: []string{"x"}}}
	for name, tc := range map[string]struct {
		nodes []batchv1beta1.DAGNode
		want  string
	}{
		"diamond":       {[]batchv1beta1.DAGNode{node("a"), node("b1", "a"), node("b2", "a"), node("c", "b1", "b2")}, ""},
		"unknown":       {[]batchv1beta1.DAGNode{node("a", "zz")}, `spec.dag.templates[0].dependencies: Not found: "zz"`},
		"self":          {[]batchv1beta1.DAGNode{node("a", "a")}, "cannot depend on itself"},
		"duplicate":     {[]batchv1beta1.DAGNode{node("a"), node("a")}, `spec.dag.templates[1].name: Duplicate value: "a"`},
		"cycle":         {[]batchv1beta1.DAGNode{node("a", "c"), node("b", "a"), node("c", "b")}, "the dependencies form a cycle"},
		"implicitCycle": {[]batchv1beta1.DAGNode{node("b"), cyc, node("e", "c")}, "c -> e -> c"},
	} {
		t.Run(name, func(t *testing.T) {
			errs := validateGraph(&batchv1beta1.DAGWorkflowTemplate{Templates: tc.nodes}, field.NewPath("spec", "dag"))
			got := errs.ToAggregate()
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("refused: %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Fatalf("got %v, want an error with %q", got, tc.want)
			}
		})
	}
}

func TestEvalWhen(t *testing.T) {
	vars := Variables{"templates.flip.results.coin": "heads", "params.side": "tails"}
	for _, tc := range []struct {
		when []batchv1beta1.WhenExpression
		want bool
	}{
		{[]batchv1beta1.WhenExpression{{Input: "$(templates.flip.results.coin)", Operator: "in", Values: []string{"heads"}}}, true},
		{[]batchv1beta1.WhenExpression{{Input: "$(templates.flip.results.coin)", Operator: "notin", Values: []string{"heads"}}}, false},
		{[]batchv1beta1.WhenExpression{{Input: "$(templates.flip.results.coin)", Operator: "in", Values: []string{"$(params.side)"}}}, false},
		{[]batchv1beta1.WhenExpression{{Operator: "in", Values: []string{""}}}, true},                                       // an empty input is ""
		{[]batchv1beta1.WhenExpression{{Input: "$(templates.gone.results.x)", Operator: "in", Values: []string{""}}}, true}, // no such result: ""
		{[]batchv1beta1.WhenExpression{
			{Input: "a", Operator: "in", Values: []string{"a"}},
			{Input: "b", Operator: "in", Values: []string{"a"}},
		}, false},
	} {
		got, ok, err := evalWhen(tc.when, vars.budget(MaxSubstitutedObjectBytes), "when")
		if err != nil || ok != tc.want {
			t.Errorf("evalWhen(%+v) = %v, %v, want %v", tc.when, ok, err, tc.want)
		}
		if len(got) != len(tc.when) || strings.Contains(got[0].Input, "$(") {
			t.Errorf("substituted expressions %+v", got)
		}
	}
}

func TestTemplateType(t *testing.T) {
	pod := &batchv1beta1.PodWorkflowTemplate{}
	for name, tc := range map[string]struct {
		spec batchv1beta1.WorkflowTemplateSpec
		want batchv1beta1.WorkflowTemplateType
		err  string
	}{
		"inferred":     {batchv1beta1.WorkflowTemplateSpec{Pod: pod}, "Pod", ""},
		"explicit":     {batchv1beta1.WorkflowTemplateSpec{Type: "DAG", DAG: &batchv1beta1.DAGWorkflowTemplate{}}, "DAG", ""},
		"job":          {batchv1beta1.WorkflowTemplateSpec{Type: "MPIJob", MPIJob: &batchv1beta1.MPIJobWorkflowTemplate{}}, "MPIJob", ""},
		"none":         {batchv1beta1.WorkflowTemplateSpec{}, "", "spec.type: Required"},
		"missingField": {batchv1beta1.WorkflowTemplateSpec{Type: "SeqPod", Pod: pod}, "", "spec.seqPod: Required"},
		"two":          {batchv1beta1.WorkflowTemplateSpec{Type: "Pod", Pod: pod, DAG: &batchv1beta1.DAGWorkflowTemplate{}}, "", "spec.dag: Forbidden"},
		"unknownType":  {batchv1beta1.WorkflowTemplateSpec{Type: "Lambda", Pod: pod}, "", "spec.type: Unsupported value"},
	} {
		t.Run(name, func(t *testing.T) {
			typ, err := TemplateType(&tc.spec, field.NewPath("spec"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || typ != tc.want {
				t.Fatalf("got %s %v, want %s", typ, err, tc.want)
			}
		})
	}
}

func TestNames(t *testing.T) {
	if a, b := suffix("uid", "0"), suffix("uid", "1"); a == b || len(a) != 5 || a != suffix("uid", "0") {
		t.Errorf("suffixes %q %q", a, b)
	}
	long := strings.Repeat("a", 300)
	if n := childName(long, "bcdfg"); len(n) > validation.DNS1123SubdomainMaxLength || !strings.HasSuffix(n, "-bcdfg") {
		t.Errorf("childName = %q", n)
	}
	lv := labelValue(strings.Repeat("run-", 30))
	if errs := validation.IsValidLabelValue(lv); len(errs) > 0 {
		t.Errorf("labelValue %q: %v", lv, errs)
	}
	if labelValue("short") != "short" {
		t.Error("short names are their own label values")
	}
}
