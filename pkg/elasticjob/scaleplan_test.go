package elasticjob

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

// TestInvalidScalePlanFailed: a ScalePlan that came past the webhook (it
// was down) naming a type the job has no spec for is marked Failed, with a
// finish time and a Warning event InvalidScalePlan that names the field;
// nothing of it is executed.
func TestInvalidScalePlanFailed(t *testing.T) {
	job := testJob(elasticv1alpha1.AllreduceStrategy, map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{"worker": spec(1)})
	plan := &elasticv1alpha1.ScalePlan{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: "j-scaleplan-0"},
		Spec: elasticv1alpha1.ScaleSpec{
			OwnerJob: job.Name,
			ReplicaResourceSpecs: map[elasticv1alpha1.ReplicaType]elasticv1alpha1.ReplicaResourceSpec{
				"ps": {Replicas: 2, Resource: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
			},
		},
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, elasticv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(job, plan).
		WithStatusSubresource(&elasticv1alpha1.ElasticJob{}, &elasticv1alpha1.ScalePlan{}).Build()
	recorder := events.NewFakeRecorder(10)
	r := NewReconciler(c, c, recorder, "")

	if err := r.runPlans(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	got := &elasticv1alpha1.ScalePlan{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(plan), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != elasticv1alpha1.JobFailed || got.Status.FinishTime == nil {
		t.Errorf("plan status %+v, want Failed with a finish time", got.Status)
	}
	select {
	case ev := <-recorder.Events:
		want := `Warning InvalidScalePlan spec.replicaResourceSpecs[ps]: Invalid value: "ps": ElasticJob j has no replica spec ps`
		if !strings.HasPrefix(ev, want) {
			t.Errorf("event %q, want %q", ev, want)
		}
	default:
		t.Error("no event")
	}
	if job.Status.ScalePlan != "" {
		t.Errorf("status.scalePlan %q: the refused plan was run", job.Status.ScalePlan)
	}
	var pods corev1.PodList
	if err := c.List(t.Context(), &pods); err != nil || len(pods.Items) != 0 {
		t.Errorf("pods %d (%v), want none created", len(pods.Items), err)
	}
}
