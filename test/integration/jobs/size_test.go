package jobs

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/test/testutil"
)

// sizedJob returns a GenericJob of the replica types given as type, count
// pairs.
func sizedJob(ns, name string, types ...any) *batchv1beta1.GenericJob {
	gj := &batchv1beta1.GenericJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for i := 0; i < len(types); i += 2 {
		gj.Spec.ReplicaSpecs = append(gj.Spec.ReplicaSpecs, batchv1beta1.ReplicaSpec{
			Type: types[i].(string), Replicas: ptr.To(int32(types[i+1].(int))), Template: template(container("main", "run")),
		})
	}
	return gj
}

// testTooLarge: a job of millions of replicas is refused by the CRD schema,
// naming the field; one whose counts each pass the schema but add up to
// more than jobs.MaxJobPods is refused by the webhook, and, created where
// no webhook sees it, fails with InvalidSpec and a Warning event naming the
// limit, without a pod or a replica entry. A normal job created afterwards
// gets its pods from the same controllers.
func testTooLarge(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)

	mpi := &batchv1beta1.MPIJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mpi"}}
	mpi.Spec.Worker = &batchv1beta1.MPIWorkerSpec{Replicas: ptr.To[int32](10_000_000), Template: mpiWorkerTemplate("mpi-worker", nil)}
	for _, tc := range []struct {
		name string
		obj  client.Object
		want []string
	}{
		{"ten million generic replicas", sizedJob(ns, "huge", "worker", 10_000_000),
			[]string{"spec.replicaSpecs[0].replicas", "less than or equal to 10000"}},
		{"ten million MPI workers", mpi, []string{"spec.worker.replicas", "less than or equal to 10000"}},
		{"too many in all", sizedJob(ns, "sum", "ps", 5001, "worker", 5000),
			[]string{"spec.replicaSpecs[*].replicas", "10001 pods, more than the 10000 a job may have"}},
	} {
		err := e.c.Create(ctx, tc.obj)
		if err == nil {
			t.Errorf("%s: created", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, w)
			}
		}
	}

	bypass := e.namespace(t, map[string]string{bypassLabel: "true"})
	sum := sizedJob(bypass, "sum", "ps", 5001, "worker", 5000)
	if err := e.c.Create(ctx, sum); err != nil {
		t.Fatal(err)
	}
	s := e.waitPhase(ctx, t, sum, batchv1beta1.JobFailed)
	c := condition(t, s, batchv1beta1.JobFailedCond)
	if c.Reason != jobs.ReasonInvalid || !strings.Contains(c.Message, "spec.replicaSpecs[*].replicas: Invalid value: 10001") ||
		!strings.Contains(c.Message, "more than the 10000 a job may have") {
		t.Errorf("Failed condition %+v, want %s naming the field and the limit", c, jobs.ReasonInvalid)
	}
	e.waitEvent(ctx, t, bypass, "sum", jobs.EventFailed, "more than the 10000 a job may have")
	if pods := e.pods(ctx, t, bypass, "sum"); len(pods) != 0 {
		t.Errorf("%d pods of a job over the limit", len(pods))
	}
	if len(s.Tasks) != 0 {
		t.Errorf("%d tasks in the status of a job over the limit", len(s.Tasks))
	}

	normal := sizedJob(bypass, "normal", "worker", 2)
	if err := e.c.Create(ctx, normal); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, bypass, "normal", "normal-worker-0", "normal-worker-1")
	for _, p := range pods {
		e.setPod(ctx, t, p, corev1.PodRunning, nil)
	}
	e.waitPhase(ctx, t, normal, batchv1beta1.JobRunning)
}
