package beamjob

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/accelstack/accelstack/api"
	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// TestFlinkOperatorMissing: on a cluster whose API has no FlinkCluster
// (the reader is a real client whose REST mapper lacks it, and which
// reaches no server), a BeamJob stays Initializing with ClusterRunning
// False, FlinkOperatorMissing naming the CRD, one Warning event saying so
// however often it is reconciled, and no reconcile error: it is looked at
// again after pollInterval.
func TestFlinkOperatorMissing(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	api.MustAddToScheme(scheme)
	bj := &batchv1beta1.BeamJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wc", UID: "job-uid"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(bj).WithStatusSubresource(bj).Build()
	mapper := meta.NewDefaultRESTMapper(nil)
	reader, err := client.New(&rest.Config{Host: "https://127.0.0.1:1"}, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	recorder := events.NewFakeRecorder(10)
	r := &Reconciler{client: c, reader: reader, recorder: recorder}

	for i := 0; i < 2; i++ {
		res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(bj)})
		if err != nil || res.RequeueAfter != pollInterval {
			t.Fatalf("reconcile %d: %+v, %v; want a retry after %v", i, res, err, pollInterval)
		}
	}
	got := &batchv1beta1.BeamJob{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(bj), got); err != nil {
		t.Fatal(err)
	}
	cond := condition(&got.Status, batchv1beta1.BeamClusterRunning)
	if got.Status.Phase != batchv1beta1.BeamJobInitializing || cond == nil || cond.Status != corev1.ConditionFalse ||
		cond.Reason != ReasonFlinkOperatorMissing || !strings.Contains(cond.Message, "flinkclusters.flinkoperator.k8s.io") {
		t.Errorf("phase %s, ClusterRunning %+v; want Initializing and False %s naming the CRD", got.Status.Phase, cond, ReasonFlinkOperatorMissing)
	}
	var evs []string
	for len(recorder.Events) > 0 {
		evs = append(evs, <-recorder.Events)
	}
	if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning "+ReasonFlinkOperatorMissing) || !strings.Contains(evs[0], "flinkclusters.flinkoperator.k8s.io") {
		t.Errorf("events %q, want one Warning %s naming the CRD", evs, ReasonFlinkOperatorMissing)
	}
}
