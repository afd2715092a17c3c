package jobs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

// testDefaults: the schema fills the defaults the manual states.
func testDefaults(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, map[string]string{bypassLabel: "true"})
	pj := pytorchJob(ns, "defaults", batchv1beta1.PyTorchReplicaSpec{Type: "worker", Template: template(container("pytorch"))})
	pj.Spec.TorchrunConfig = &batchv1beta1.TorchrunConfig{Enabled: true}
	pj.Spec.Scheduler = &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{Queue: "default"}}
	pj.Spec.RunMode = &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{Enabled: true}}
	if err := e.c.Create(ctx, pj); err != nil {
		t.Fatal(err)
	}
	e.get(ctx, t, pj)
	got := []any{*pj.Spec.ReplicaSpecs[0].Replicas, pj.Spec.ReplicaSpecs[0].RestartPolicy, *pj.Spec.RunPolicy.BackoffLimit,
		pj.Spec.RunPolicy.CleanUpPolicy, pj.Spec.TorchrunConfig.RdzvBackend, pj.Spec.Scheduler.T9kScheduler.Priority}
	want := []any{int32(1), batchv1beta1.ReplicaRestartOnFailure, int32(3), batchv1beta1.CleanUpPolicyNone, "c10d", int32(0)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PyTorchTrainingJob defaults (-want +got):\n%s", diff)
	}

	gj := &batchv1beta1.GenericJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "defaults"},
		Spec: batchv1beta1.GenericJobSpec{
			ReplicaSpecs: []batchv1beta1.ReplicaSpec{{Type: "worker", RestartPolicy: &batchv1beta1.RestartPolicy{}, Template: template(container("main"))}},
			RunMode:      &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{Enabled: true}},
		}}
	if err := e.c.Create(ctx, gj); err != nil {
		t.Fatal(err)
	}
	e.get(ctx, t, gj)
	if rp := gj.Spec.ReplicaSpecs[0].RestartPolicy; rp.Policy != batchv1beta1.RestartPolicyOnFailure || rp.Limit != 0 || gj.Spec.CleanUpPolicy != batchv1beta1.CleanUpPolicyNone {
		t.Errorf("GenericJob defaults: restartPolicy %+v cleanUpPolicy %q", rp, gj.Spec.CleanUpPolicy)
	}

	tj := tfJob(ns, "defaults", batchv1beta1.TensorFlowReplicaSpec{Type: "worker", Template: template(container("tensorflow"))})
	tj.Spec.RunMode = &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{Enabled: true}}
	if err := e.c.Create(ctx, tj); err != nil {
		t.Fatal(err)
	}
	e.get(ctx, t, tj)
	if rs := tj.Spec.ReplicaSpecs[0]; *rs.Replicas != 1 || rs.RestartPolicy != batchv1beta1.ReplicaRestartOnFailure || *tj.Spec.RunPolicy.BackoffLimit != 3 {
		t.Errorf("TensorFlowTrainingJob defaults: %+v %+v", rs, tj.Spec.RunPolicy)
	}
	xj := &batchv1beta1.XGBoostTrainingJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "defaults"},
		Spec: batchv1beta1.XGBoostTrainingJobSpec{
			ReplicaSpecs: []batchv1beta1.XGBoostReplicaSpec{{Type: "master", Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container("xgboost")}}}}},
			RunPolicy:    batchv1beta1.RunPolicy{ActiveDeadlineSeconds: ptr.To[int64](60)},
			RunMode:      &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{Enabled: true}},
		}}
	if err := e.c.Create(ctx, xj); err != nil {
		t.Fatal(err)
	}
	e.get(ctx, t, xj)
	if rs := xj.Spec.ReplicaSpecs[0]; *rs.Replicas != 1 || rs.RestartPolicy != batchv1beta1.ReplicaRestartOnFailure || *xj.Spec.RunPolicy.BackoffLimit != 3 {
		t.Errorf("XGBoostTrainingJob defaults: %+v %+v", rs, xj.Spec.RunPolicy)
	}
}
