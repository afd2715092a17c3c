package workflow

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/accelstack/accelstack/api"
	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs/kinds"
	"github.com/accelstack/accelstack/pkg/workflow/rules"
)

// The workflow's tables of T9k Job steps (the template bodies, the kinds a
// run watches, strict decoding, the default success and failure rules)
// hold exactly the job kinds registered with a workflow field.
func TestStepTablesMatchRegistry(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := api.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // kind → field
	for _, k := range kinds.Registered() {
		if k.WorkflowField != "" {
			want[k.GVK.Kind] = k.WorkflowField
		}
	}
	if len(want) == 0 {
		t.Fatal("no job kind registers a workflow field")
	}

	got := map[string]string{}
	for _, b := range bodies(&batchv1beta1.WorkflowTemplateSpec{}) {
		switch b.typ {
		case batchv1beta1.WorkflowTemplateTypePod, batchv1beta1.WorkflowTemplateTypeSeqPod,
			batchv1beta1.WorkflowTemplateTypeResource, batchv1beta1.WorkflowTemplateTypeDAG:
			continue
		}
		got[string(b.typ)] = b.field
	}
	if !maps.Equal(want, got) {
		t.Errorf("template bodies of job steps %v, registered %v", got, want)
	}

	var watched []string
	for _, o := range jobKinds() {
		gvk, err := apiutil.GVKForObject(o, scheme)
		if err != nil {
			t.Fatal(err)
		}
		watched = append(watched, gvk.Kind)
		if _, ok := want[gvk.Kind]; !ok {
			t.Errorf("a run watches %s, which no registered kind runs as a step", gvk.Kind)
		}
	}
	for kind, f := range want {
		if !slices.Contains(watched, kind) {
			t.Errorf("a run does not watch the %s jobs its steps create", kind)
		}
		if jobField(batchv1beta1.WorkflowTemplateType(kind)) != f {
			t.Errorf("jobField(%s) = %q, want %q", kind, jobField(batchv1beta1.WorkflowTemplateType(kind)), f)
		}
		if strictFields[f] == nil {
			t.Errorf("spec.%s is not decoded strictly", f)
		}
		if _, _, ok := rules.ForT9kJob(schema.GroupKind{Group: batchv1beta1.GroupVersion.Group, Kind: kind}); !ok {
			t.Errorf("a Resource step creating a %s gets no default success and failure rules", kind)
		}
	}
}
