package workflows

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

// emptyDescriptions is a WorkflowTemplate as users write it: descriptions
// left empty, which YAML reads as null.
const emptyDescriptions = `
apiVersion: batch.tensorstack.dev/v1beta1
kind: WorkflowTemplate
metadata:
  name: empty-descriptions
spec:
  description:
  params:
    - name: message
      description:
      default: hi
  workspaces:
    - name: data
      description:
  results:
    - name: out
      description:
  type: SeqPod
  seqPod:
    steps:
      - name: hello
        image: ubuntu
        script: echo $(params.message) > $(results.out.path)
`

// testApplyNullDescriptions checks that a template whose descriptions are
// null is accepted by server-side apply, and reads back as empty.
func testApplyNullDescriptions(t *testing.T, e *env) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(emptyDescriptions), &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(ns)
	if err := e.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("user"), client.ForceOwnership); err != nil {
		t.Fatalf("applying a template with null descriptions: %v", err)
	}
	wt := &batchv1beta1.WorkflowTemplate{}
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(u), wt); err != nil {
		t.Fatal(err)
	}
	if wt.Spec.Description != "" || len(wt.Spec.Params) != 1 || wt.Spec.Params[0].Description != "" || wt.Spec.Params[0].Default == nil ||
		*wt.Spec.Params[0].Default != "hi" || len(wt.Spec.Workspaces) != 1 || len(wt.Spec.Results) != 1 {
		t.Errorf("applied template %+v", wt.Spec)
	}
}
