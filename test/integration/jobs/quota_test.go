package jobs

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/test/testutil"
)

// testQuota: a GenericJob whose pods a ResourceQuota of its namespace
// refuses is accepted and kept waiting, not failed: ReplicaFailure True
// (ExceededQuota) and CreationFailed events quote the API server; once the
// quota is raised its pods are created and the condition turns False.
func testQuota(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	const gpu = corev1.ResourceName("requests.nvidia.com/gpu")
	rq := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gpus"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{gpu: resource.MustParse("1")}},
	}
	if err := e.c.Create(ctx, rq); err != nil {
		t.Fatal(err)
	}
	// The quota admits nothing until kube-controller-manager has counted
	// its usage.
	testutil.Poll(ctx, t, "the quota's usage", func() (bool, string, error) {
		e.get(ctx, t, rq)
		_, ok := rq.Status.Used[gpu]
		return ok, fmt.Sprintf("%+v", rq.Status), nil
	})

	c := container("worker", "sleep", "60")
	c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}
	gj := &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "over-quota"},
		Spec:       batchv1beta1.GenericJobSpec{ReplicaSpecs: []batchv1beta1.ReplicaSpec{{Type: "worker", Replicas: ptr.To[int32](2), Template: template(c)}}},
	}
	if err := e.c.Create(ctx, gj); err != nil {
		t.Fatalf("the job was refused, want it accepted: %v", err)
	}
	e.waitEvent(ctx, t, ns, gj.Name, jobs.EventCreationFailed, "exceeded quota: gpus")
	testutil.Poll(ctx, t, "ReplicaFailure ExceededQuota", func() (bool, string, error) {
		e.get(ctx, t, gj)
		cond := jobs.Condition(&gj.Status, batchv1beta1.JobReplicaFailure)
		return cond != nil && cond.Status == corev1.ConditionTrue && cond.Reason == jobs.ReasonExceededQuota,
			fmt.Sprintf("%+v", gj.Status.Conditions), nil
	})
	cond := condition(t, &gj.Status, batchv1beta1.JobReplicaFailure)
	for _, want := range []string{"2 of 2 pods", `pods "over-quota-worker-`, "is forbidden: exceeded quota: gpus", "requested: requests.nvidia.com/gpu=2", "limited: requests.nvidia.com/gpu=1"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("ReplicaFailure message %q does not say %q", cond.Message, want)
		}
	}
	if gj.Status.Phase != batchv1beta1.JobPending {
		t.Errorf("phase %q, want Pending while the quota refuses the pods", gj.Status.Phase)
	}
	if n := len(e.pods(ctx, t, ns, gj.Name)); n != 0 {
		t.Errorf("%d pods created over the quota", n)
	}

	// Room made: the pods are created on the next try, and the condition
	// no longer blames the quota.
	if err := e.update(ctx, t, rq, func() { rq.Spec.Hard[gpu] = resource.MustParse("4") }); err != nil {
		t.Fatal(err)
	}
	e.waitPods(ctx, t, ns, gj.Name, "over-quota-worker-0", "over-quota-worker-1")
	testutil.Poll(ctx, t, "ReplicaFailure False", func() (bool, string, error) {
		e.get(ctx, t, gj)
		cond := jobs.Condition(&gj.Status, batchv1beta1.JobReplicaFailure)
		return cond != nil && cond.Status == corev1.ConditionFalse && !strings.Contains(cond.Message, "quota of the namespace refuses"),
			fmt.Sprintf("%+v", gj.Status.Conditions), nil
	})
	if gj.Status.Phase == batchv1beta1.JobFailed {
		t.Errorf("the job failed: %+v", gj.Status.Conditions)
	}
}
