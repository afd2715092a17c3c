package workflow

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// TestReaderLookupFallsBackToLive checks that a template the cache has not
// seen yet, as when it is applied together with its run, is read live, and
// that one found nowhere is nil without an error.
func TestReaderLookupFallsBackToLive(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := batchv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	wt := &batchv1beta1.WorkflowTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dag"},
		Spec:       batchv1beta1.WorkflowTemplateSpec{Description: "live"},
	}
	cache := fake.NewClientBuilder().WithScheme(scheme).Build()
	live := fake.NewClientBuilder().WithScheme(scheme).WithObjects(wt).Build()
	lookup := ReaderLookup(cache, live)
	ctx := context.Background()
	got, err := lookup(ctx, "ns", "dag")
	if err != nil || got == nil || got.Description != "live" {
		t.Fatalf("lookup of a template only the API server has = %+v, %v", got, err)
	}
	if got, err := lookup(ctx, "ns", "missing"); got != nil || err != nil {
		t.Fatalf("lookup of a missing template = %+v, %v; want nil, nil", got, err)
	}
}
