package workflow

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

func TestReplaceBounded(t *testing.T) {
	big := strings.Repeat("x", batchv1beta1.MaxParamValueLength)
	v := Variables{"params.big": big, "params.small": "s"}
	fits := strings.Repeat("$(params.big)", MaxSubstitutedBytes/len(big))
	for name, tc := range map[string]struct {
		in      string
		wantLen int
		wantErr *TooLongError
	}{
		"atTheLimit":    {in: fits, wantLen: MaxSubstitutedBytes},
		"oneByteOver":   {in: fits + "$(params.small)", wantErr: &TooLongError{Variable: "params.small", Field: "f", Limit: MaxSubstitutedBytes}},
		"amplified":     {in: strings.Repeat("$(params.big)", 1000), wantErr: &TooLongError{Variable: "params.big", Field: "f", Limit: MaxSubstitutedBytes}},
		"unknownKept":   {in: strings.Repeat("$(params.none)", 10), wantLen: 10 * len("$(params.none)")},
		"noReferences":  {in: strings.Repeat("y", 2*MaxSubstitutedBytes), wantLen: 2 * MaxSubstitutedBytes},
		"literalCounts": {in: strings.Repeat("y", MaxSubstitutedBytes) + "$(params.small)", wantErr: &TooLongError{Variable: "params.small", Field: "f", Limit: MaxSubstitutedBytes}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := v.Replace(tc.in, "f")
			var tooLong *TooLongError
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("Replace: %v", err)
			case tc.wantErr == nil && len(got) != tc.wantLen:
				t.Fatalf("Replace returned %d bytes, want %d", len(got), tc.wantLen)
			case tc.wantErr != nil && !errors.As(err, &tooLong):
				t.Fatalf("Replace returned %d bytes and %v, want %+v", len(got), err, tc.wantErr)
			case tc.wantErr != nil && *tooLong != *tc.wantErr:
				t.Fatalf("Replace: %+v, want %+v", *tooLong, *tc.wantErr)
			}
		})
	}
}

// TestReplaceRefusesWithoutBuilding checks that an amplification is refused
// before its output is built: a 64 KiB param referred to 1000 times would
// be 64 MiB. The bound, a quarter of that, holds under the race detector
// too, which allocates more for the same work (about 9 MiB here).
func TestReplaceRefusesWithoutBuilding(t *testing.T) {
	v := Variables{"params.p": strings.Repeat("x", batchv1beta1.MaxParamValueLength)}
	s := strings.Repeat("$(params.p)", 1000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := v.Replace(s, "f")
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("Replace accepted a 64 MiB result")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("Replace allocated %d bytes to refuse", grew)
	}
}

func TestReplaceAllBoundsObject(t *testing.T) {
	// Five args of 250 KiB each: every one fits, all together are over
	// the object's bound.
	val := strings.Repeat("x", 50<<10)
	v := Variables{"params.p": val}
	arg := strings.Repeat("$(params.p)", 5)
	ps := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Args: []string{arg, arg, arg, arg, arg}}}}
	err := v.ReplaceAll(ps, "spec.pod")
	var tooLong *TooLongError
	if !errors.As(err, &tooLong) {
		t.Fatalf("ReplaceAll: %v, want a TooLongError", err)
	}
	want := TooLongError{Variable: "params.p", Field: "spec.pod.containers[0].args[4]", Limit: MaxSubstitutedObjectBytes, Object: true}
	if *tooLong != want {
		t.Errorf("ReplaceAll: %+v, want %+v", *tooLong, want)
	}
	if !strings.Contains(err.Error(), "$(params.p)") || !strings.Contains(err.Error(), "spec.pod.containers[0].args[4]") {
		t.Errorf("message %q does not name the param and the field", err)
	}
	if ps.Containers[0].Args[0] != arg {
		t.Errorf("a refused substitution changed the object")
	}

	// Four of them fit.
	ps.Containers[0].Args = ps.Containers[0].Args[:4]
	if err := v.ReplaceAll(ps, "spec.pod"); err != nil {
		t.Fatalf("ReplaceAll of 1000 KiB: %v", err)
	}
	if got := ps.Containers[0].Args[3]; got != strings.Repeat(val, 5) {
		t.Errorf("arg has %d bytes, want %d", len(got), 5*len(val))
	}
}

func TestReplaceTreeNamesField(t *testing.T) {
	v := Variables{"params.p": strings.Repeat("x", batchv1beta1.MaxParamValueLength)}
	manifest := map[string]any{"spec": map[string]any{"items": []any{"ok", strings.Repeat("$(params.p)", 5)}}}
	_, err := v.budget(MaxSubstitutedObjectBytes).replaceTree(manifest, "spec.resource.manifest")
	if err == nil || !strings.Contains(err.Error(), "spec.resource.manifest.spec.items[1]") {
		t.Errorf("replaceTree: %v, want an error naming spec.resource.manifest.spec.items[1]", err)
	}
}

func TestEvalWhenAndChildParamsBounded(t *testing.T) {
	v := Variables{"params.p": strings.Repeat("x", batchv1beta1.MaxParamValueLength)}
	when := []batchv1beta1.WhenExpression{{Input: "a", Operator: batchv1beta1.WhenIn, Values: []string{"a", strings.Repeat("$(params.p)", 5)}}}
	_, _, err := evalWhen(when, v.budget(MaxSubstitutedObjectBytes), "spec.dag.templates[0].when")
	if err == nil || !strings.Contains(err.Error(), "spec.dag.templates[0].when[0].values[1]") {
		t.Errorf("evalWhen: %v, want an error naming the value", err)
	}
	r := &Reconciler{scheme: testScheme(t)}
	run := &batchv1beta1.WorkflowRun{}
	run.Name, run.Namespace, run.UID = "r", "ns", "uid"
	n := &batchv1beta1.DAGNode{Name: "a", WorkflowTemplateRef: "t", Params: []batchv1beta1.Param{{Name: "q", Value: "$(params.p)-"}}}
	_, err = r.childRun(run, n, &binding{}, v.budget(MaxSubstitutedObjectBytes), "spec.dag.templates[0].params")
	if err == nil || !strings.Contains(err.Error(), "spec.dag.templates[0].params[0].value") {
		t.Errorf("childRun: %v, want an error naming the param over %d bytes", err, batchv1beta1.MaxParamValueLength)
	}
	n.Params[0].Value = "$(params.p)"
	child, err := r.childRun(run, n, &binding{}, v.budget(MaxSubstitutedObjectBytes), "spec.dag.templates[0].params")
	if err != nil || len(child.Spec.Params[0].Value) != batchv1beta1.MaxParamValueLength {
		t.Errorf("childRun of a param at the limit: %v", err)
	}
}

// testScheme returns a scheme with the batch types.
func testScheme(t *testing.T) *k8sruntime.Scheme {
	t.Helper()
	scheme := k8sruntime.NewScheme()
	if err := batchv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}
