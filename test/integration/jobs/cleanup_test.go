package jobs

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

// testCleanUpPolicies: once a job finishes, None keeps every pod, All
// deletes them all, Unfinished deletes those still running.
func testCleanUpPolicies(t *testing.T, e *env) {
	for _, tc := range []struct {
		policy batchv1beta1.CleanUpPolicy
		left   []string
	}{
		{batchv1beta1.CleanUpPolicyNone, []string{"c-master-0", "c-worker-0", "c-worker-1"}},
		{batchv1beta1.CleanUpPolicyAll, nil},
		{batchv1beta1.CleanUpPolicyUnfinished, []string{"c-master-0", "c-worker-1"}},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			t.Parallel()
			ctx := testutil.SubtestContext(t)
			ns := e.namespace(t, nil)
			never := &batchv1beta1.RestartPolicy{Policy: batchv1beta1.RestartPolicyNever}
			gj := &batchv1beta1.GenericJob{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"},
				Spec: batchv1beta1.GenericJobSpec{
					ReplicaSpecs: []batchv1beta1.ReplicaSpec{
						{Type: "master", Template: template(container("main", "run"))},
						{Type: "worker", Replicas: ptr.To[int32](2), RestartPolicy: never, Template: template(container("main", "run"))},
					},
					SuccessRules:  []batchv1beta1.FinishRule{{"master": {0}}},
					FailureRules:  []batchv1beta1.FinishRule{{"master": {0}}},
					CleanUpPolicy: tc.policy,
				},
			}
			if err := e.c.Create(ctx, gj); err != nil {
				t.Fatal(err)
			}
			pods := e.waitPods(ctx, t, ns, "c", "c-master-0", "c-worker-0", "c-worker-1")
			e.runAll(ctx, t, ns, "c")
			e.setPod(ctx, t, pods["c-worker-1"], corev1.PodFailed, map[string]int32{"main": 1})
			e.setPod(ctx, t, pods["c-master-0"], corev1.PodSucceeded, nil)
			e.waitPhase(ctx, t, gj, batchv1beta1.JobSucceeded)
			e.waitPods(ctx, t, ns, "c", tc.left...)
			want := int32(3 - len(tc.left))
			testutil.Poll(ctx, t, "aggregate.deleted", func() (bool, string, error) {
				e.get(ctx, t, gj)
				return gj.Status.Aggregate.Deleted == want, "", nil
			})
		})
	}
}

// testTrainingCleanUp: the training jobs clean up by runPolicy.cleanUpPolicy.
func testTrainingCleanUp(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	job := pytorchJob(ns, "tidy", pytorchReplicas("master", 1, batchv1beta1.ReplicaRestartOnFailure), pytorchReplicas("worker", 1, batchv1beta1.ReplicaRestartOnFailure))
	job.Spec.RunPolicy.CleanUpPolicy = batchv1beta1.CleanUpPolicyAll
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "tidy", "tidy-master-0", "tidy-worker-0")
	e.runAll(ctx, t, ns, "tidy")
	e.setPod(ctx, t, pods["tidy-master-0"], corev1.PodSucceeded, nil)
	e.waitPhase(ctx, t, job, batchv1beta1.JobSucceeded)
	e.waitPods(ctx, t, ns, "tidy")
}
