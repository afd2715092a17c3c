package elasticjob

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

func TestTFConfigJSON(t *testing.T) {
	ps := []string{"j-edljob-ps-0:2222"}
	for _, tc := range []struct {
		name    string
		typ     elasticv1alpha1.ReplicaType
		rank    int
		ps      []string
		workers int
		want    string
	}{{
		name: "worker 1 sees workers 0 and 1",
		typ:  elasticv1alpha1.ReplicaTypeWorker, rank: 1, ps: ps, workers: 4,
		want: `{"cluster":{"worker":["j-edljob-worker-0:3333","j-edljob-worker-1:3333"],"ps":["j-edljob-ps-0:2222"],"chief":["j-edljob-chief-0:3333"]},"task":{"type":"worker","index":1}}`,
	}, {
		name: "ps sees every worker",
		typ:  elasticv1alpha1.ReplicaTypePS, rank: 0, ps: ps, workers: 3,
		want: `{"cluster":{"worker":["j-edljob-worker-0:3333","j-edljob-worker-1:3333","j-edljob-worker-2:3333"],"ps":["j-edljob-ps-0:2222"],"chief":["j-edljob-chief-0:3333"]},"task":{"type":"ps","index":0}}`,
	}, {
		name: "ps without workers has no worker key",
		typ:  elasticv1alpha1.ReplicaTypePS, rank: 1, ps: []string{"a:2222", "b:2222"}, workers: 0,
		want: `{"cluster":{"ps":["a:2222","b:2222"],"chief":["j-edljob-chief-0:3333"]},"task":{"type":"ps","index":1}}`,
	}, {
		name: "chief",
		typ:  elasticv1alpha1.ReplicaTypeChief, rank: 0, ps: ps,
		want: `{"cluster":{"ps":["j-edljob-ps-0:2222"],"chief":["j-edljob-chief-0:3333"]},"task":{"type":"chief","index":0}}`,
	}, {
		name: "evaluator sees itself",
		typ:  elasticv1alpha1.ReplicaTypeEvaluator, rank: 0, ps: ps,
		want: `{"cluster":{"ps":["j-edljob-ps-0:2222"],"chief":["j-edljob-chief-0:3333"],"evaluator":["j-edljob-evaluator-0:3333"]},"task":{"type":"evaluator","index":0}}`,
	}, {
		name: "no parameter servers is a null list",
		typ:  elasticv1alpha1.ReplicaTypeChief, rank: 0,
		want: `{"cluster":{"ps":null,"chief":["j-edljob-chief-0:3333"]},"task":{"type":"chief","index":0}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := TFConfigJSON(sparseClusterFor("j", tc.typ, tc.rank, tc.ps, tc.workers), tc.typ, tc.rank)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("TF_CONFIG (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDenseOrdersByIndex(t *testing.T) {
	s := SparseClusterSpec{
		Chief:     map[int]string{2: "c2", 0: "c0", 1: "c1"},
		Evaluator: map[int]string{5: "e5", 3: "e3"},
		Worker:    map[int]string{1: "w1", 0: "w0"},
	}
	want := ClusterSpec{Worker: []string{"w0", "w1"}, Chief: []string{"c0", "c1", "c2"}, Evaluator: []string{"e3", "e5"}}
	if diff := cmp.Diff(want, s.Dense()); diff != "" {
		t.Errorf("Dense (-want +got):\n%s", diff)
	}
}

func TestInsertTfConfigToEnvAppends(t *testing.T) {
	c := corev1.Container{Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}
	if err := InsertTfConfigToEnv(&c, SparseClusterSpec{PS: []string{"p:2222"}}, elasticv1alpha1.ReplicaTypePS, 0); err != nil {
		t.Fatal(err)
	}
	want := []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "TF_CONFIG", Value: `{"cluster":{"ps":["p:2222"],"chief":null},"task":{"type":"ps","index":0}}`}}
	if diff := cmp.Diff(want, c.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{TaskName("j", elasticv1alpha1.ReplicaTypeWorker, 3), "j-edljob-worker-3"},
		{TaskServiceAddr("j", elasticv1alpha1.ReplicaTypePS, 1), "j-edljob-ps-1:2222"},
		{TaskServiceAddr("j", elasticv1alpha1.ReplicaTypeEvaluator, 0), "j-edljob-evaluator-0:3333"},
		{MasterName("j"), "elasticjob-j-dlrover-master"},
		{MasterAddr("j"), "elasticjob-j-dlrover-master:50001"},
		{serviceHost("h:1"), "h"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
