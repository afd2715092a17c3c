package xgboost

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

func xgb(types ...any) *batchv1beta1.XGBoostTrainingJob {
	xj := &batchv1beta1.XGBoostTrainingJob{ObjectMeta: metav1.ObjectMeta{Name: "xg", Namespace: "ns"}}
	for i := 0; i < len(types); i += 2 {
		xj.Spec.ReplicaSpecs = append(xj.Spec.ReplicaSpecs, batchv1beta1.XGBoostReplicaSpec{
			Type: batchv1beta1.XGBoostReplicaType(types[i].(string)), Replicas: ptr.To(int32(types[i+1].(int))),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "xgboost"}}}},
		})
	}
	return xj
}

func env(xj *batchv1beta1.XGBoostTrainingJob, typ string, rank int32) map[string]string {
	job := Kind{}.View(xj)
	pod := &corev1.Pod{Spec: *job.Replica(typ).Template.Spec.DeepCopy()}
	Kind{}.Decorate(pod, job.Replica(typ), rank, job)
	out := map[string]string{}
	for _, e := range pod.Spec.Containers[0].Env {
		out[e.Name] = e.Value
	}
	return out
}

func TestEnv(t *testing.T) {
	xj := xgb("worker", 2, "master", 1)
	want := map[string]string{"MASTER_PORT": "9999", "MASTER_ADDR": "xg-master-0", "WORLD_SIZE": "3", "RANK": "2", "PYTHONUNBUFFERED": "1",
		"WORKER_PORT": "9999", "WORKER_ADDRS": "xg-worker-0,xg-worker-1"}
	if diff := cmp.Diff(want, env(xj, "worker", 1)); diff != "" {
		t.Errorf("worker 1 env (-want +got):\n%s", diff)
	}
	if r := env(xj, "master", 0)["RANK"]; r != "0" {
		t.Errorf("master RANK %s", r)
	}
	single := env(xgb("master", 1), "master", 0)
	if _, ok := single["WORKER_ADDRS"]; ok || single["WORLD_SIZE"] != "1" {
		t.Errorf("single replica env %v", single)
	}
	workers := env(xgb("worker", 3), "worker", 0)
	if workers["MASTER_ADDR"] != "xg-worker-0" || workers["RANK"] != "0" {
		t.Errorf("workers only: %v", workers)
	}
}

func TestValidate(t *testing.T) {
	errs := (Kind{}).Validate(xgb("master", 2, "worker", 1), nil)
	if len(errs) != 1 || errs[0].Error() != "spec.replicaSpecs[0].replicas: Invalid value: 2: there can be at most one master" {
		t.Errorf("errors %v", errs)
	}
}
