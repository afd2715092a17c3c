package jobs

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/accelstack/accelstack/api"
	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// TestEnsureTensorBoardKeepsSuspend: a TensorBoard the Resource Keeper (or
// a user) suspended stays suspended when its job is reconciled, while the
// job's other changes to its spec still apply.
func TestEnsureTensorBoardKeepsSuspend(t *testing.T) {
	scheme := runtime.NewScheme()
	api.MustAddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	ctx := context.Background()
	tf := &batchv1beta1.TensorFlowTrainingJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tf", UID: "uid"}}
	env := &Env{Client: c, Cache: c, Scheme: scheme}
	job := &Job{Object: tf}
	spec := &tensorstackv1beta1.TensorBoardSpec{Image: "tb:1"}
	if _, err := EnsureTensorBoard(ctx, env, job, "tensorflowtrainingjob", spec); err != nil {
		t.Fatal(err)
	}
	tb := &tensorstackv1beta1.TensorBoard{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "tf"}, tb); err != nil {
		t.Fatal(err)
	}
	tb.Spec.Suspend = true
	if err := c.Update(ctx, tb); err != nil {
		t.Fatal(err)
	}
	spec.Image = "tb:2"
	if _, err := EnsureTensorBoard(ctx, env, job, "tensorflowtrainingjob", spec); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "tf"}, tb); err != nil {
		t.Fatal(err)
	}
	if !tb.Spec.Suspend || tb.Spec.Image != "tb:2" {
		t.Errorf("TensorBoard spec %+v, want suspended with image tb:2", tb.Spec)
	}
}

// TestValidateTensorBoard: a job's tensorboardSpec is checked at its path
// on create and when its locations change; unchanged locations pass an
// update, so a job admitted before the check can still be paused.
func TestValidateTensorBoard(t *testing.T) {
	bad := &tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{"nfs://server/logs"}}
	good := &tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{"t9k://pvc/logs/run"}}
	if errs := ValidateTensorBoard(nil, nil); len(errs) != 0 {
		t.Errorf("no tensorboardSpec: %v", errs)
	}
	if errs := ValidateTensorBoard(good, nil); len(errs) != 0 {
		t.Errorf("valid tensorboardSpec refused: %v", errs)
	}
	errs := ValidateTensorBoard(bad, nil)
	if len(errs) != 1 || errs[0].Field != "spec.tensorboardSpec.trainingLogFilesets[0]" {
		t.Errorf("create with an unknown scheme: %v", errs)
	}
	if errs := ValidateTensorBoard(bad, bad.DeepCopy()); len(errs) != 0 {
		t.Errorf("update leaving the locations alone refused: %v", errs)
	}
	if errs := ValidateTensorBoard(bad, good); len(errs) != 1 {
		t.Errorf("update to an unknown scheme: %v", errs)
	}
}
