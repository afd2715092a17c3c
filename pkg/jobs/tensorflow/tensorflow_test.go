package tensorflow

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

func tfjob(sparse bool, types ...any) *batchv1beta1.TensorFlowTrainingJob {
	tj := &batchv1beta1.TensorFlowTrainingJob{ObjectMeta: metav1.ObjectMeta{Name: "tf", Namespace: "ns"}}
	tj.Spec.EnableDynamicWorker = sparse
	for i := 0; i < len(types); i += 2 {
		tj.Spec.ReplicaSpecs = append(tj.Spec.ReplicaSpecs, batchv1beta1.TensorFlowReplicaSpec{
			Type: batchv1beta1.TensorFlowReplicaType(types[i].(string)), Replicas: ptr.To(int32(types[i+1].(int))),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow"}, {Name: "sidecar"}}}},
		})
	}
	return tj
}

func TestTFConfig(t *testing.T) {
	tj := tfjob(false, "worker", 2, "ps", 1, "chief", 1, "evaluator", 1)
	tj.Spec.ReplicaSpecs[1].Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "tfjob-port", ContainerPort: 3333}}
	job := Kind{}.View(tj)
	want := `{"cluster":{"chief":["tf-chief-0.ns.svc:2222"],"evaluator":["tf-evaluator-0.ns.svc:2222"],"ps":["tf-ps-0.ns.svc:3333"],` +
		`"worker":["tf-worker-0.ns.svc:2222","tf-worker-1.ns.svc:2222"]},"task":{"type":"ps","index":0},"environment":"cloud"}`
	if got := TFConfig(job, "ps", 0, false); got != want {
		t.Errorf("dense\n got %s\nwant %s", got, want)
	}
	pod := &corev1.Pod{Spec: *tj.Spec.ReplicaSpecs[0].Template.Spec.DeepCopy()}
	Kind{}.Decorate(pod, job.Replica("worker"), 1, job)
	for _, c := range pod.Spec.Containers {
		if len(c.Env) != 1 || c.Env[0].Name != "TF_CONFIG" {
			t.Errorf("container %s env %v", c.Name, c.Env)
		}
	}

	sj := Kind{}.View(tfjob(true, "worker", 3, "ps", 2, "chief", 1))
	for _, tc := range []struct {
		typ  string
		rank int32
		want string
	}{
		{"worker", 2, `{"cluster":{"worker":{"2":"tf-worker-2.ns.svc:2222"},"ps":["tf-ps-0.ns.svc:2222","tf-ps-1.ns.svc:2222"]},"task":{"type":"worker","index":2}}`},
		{"ps", 1, `{"cluster":{"worker":{},"ps":["tf-ps-1.ns.svc:2222"]},"task":{"type":"ps","index":1}}`},
		{"chief", 0, `{"cluster":{"worker":{},"ps":[]},"task":{"type":"chief","index":0}}`},
	} {
		if got := TFConfig(sj, tc.typ, tc.rank, true); got != tc.want {
			t.Errorf("sparse %s %d\n got %s\nwant %s", tc.typ, tc.rank, got, tc.want)
		}
	}
}

func TestSingleReplicaHasNoTFConfig(t *testing.T) {
	tj := tfjob(false, "worker", 1)
	job := Kind{}.View(tj)
	pod := &corev1.Pod{Spec: *tj.Spec.ReplicaSpecs[0].Template.Spec.DeepCopy()}
	Kind{}.Decorate(pod, job.Replica("worker"), 0, job)
	if len(pod.Spec.Containers[0].Env) != 0 {
		t.Errorf("env %v", pod.Spec.Containers[0].Env)
	}
}

func TestLeader(t *testing.T) {
	if l := leader(Kind{}.View(tfjob(false, "worker", 2, "chief", 1))); l != "chief" {
		t.Errorf("leader %s, want chief", l)
	}
	if l := leader(Kind{}.View(tfjob(false, "worker", 2, "chief", 0, "ps", 1))); l != "worker" {
		t.Errorf("leader %s, want worker", l)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		tj   *batchv1beta1.TensorFlowTrainingJob
		want []string
	}{
		{tfjob(false, "chief", 1, "worker", 2, "ps", 1, "evaluator", 1), nil},
		{tfjob(false, "chief", 2), []string{"spec.replicaSpecs[0].replicas: Invalid value: 2: there can be at most one chief"}},
		{tfjob(false, "master", 1), []string{`spec.replicaSpecs[0].type: Unsupported value: "master": supported values: "chief", "worker", "ps", "evaluator"`,
			"spec.replicaSpecs: Required value: a chief or at least one worker is needed to lead the job"}},
	} {
		var got []string
		for _, e := range (Kind{}).Validate(tc.tj, nil) {
			got = append(got, e.Error())
		}
		if len(got) != len(tc.want) {
			t.Errorf("errors %q, want %q", got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("error %q, want %q", got[i], tc.want[i])
			}
		}
	}
}
