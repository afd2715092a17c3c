package jobs

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

// testDeadline: a job running past runPolicy.activeDeadlineSeconds fails and
// loses its unfinished pods, even under cleanUpPolicy None.
func testDeadline(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	job := pytorchJob(ns, "late", pytorchReplicas("master", 1, batchv1beta1.ReplicaRestartOnFailure), pytorchReplicas("worker", 1, batchv1beta1.ReplicaRestartOnFailure))
	job.Spec.RunPolicy.ActiveDeadlineSeconds = ptr.To[int64](3)
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "late", "late-master-0", "late-worker-0")
	e.runAll(ctx, t, ns, "late")
	e.setPod(ctx, t, pods["late-worker-0"], corev1.PodSucceeded, nil)
	s := e.waitPhase(ctx, t, job, batchv1beta1.JobFailed)
	c := condition(t, s, batchv1beta1.JobFailedCond)
	if c.Reason != "DeadlineExceeded" || c.Message != "The job was active longer than its deadline of 3 seconds." {
		t.Errorf("Failed condition %+v", c)
	}
	if got := s.CompletionTime.Sub(s.StartTime.Time); got.Seconds() < 3 {
		t.Errorf("failed %v after starting, before its deadline", got)
	}
	// The running master is deleted, the finished worker kept.
	e.waitPods(ctx, t, ns, "late", "late-worker-0")
}
