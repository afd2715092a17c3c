package pytorch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

func replica(typ string, n int32, cmd []string, args ...string) batchv1beta1.PyTorchReplicaSpec {
	return batchv1beta1.PyTorchReplicaSpec{Type: typ, Replicas: ptr.To(n), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "pytorch", Command: cmd, Args: args}},
	}}}
}

func ptj(specs ...batchv1beta1.PyTorchReplicaSpec) *batchv1beta1.PyTorchTrainingJob {
	return &batchv1beta1.PyTorchTrainingJob{ObjectMeta: metav1.ObjectMeta{Name: "pt", Namespace: "ns", UID: "uid-1"},
		Spec: batchv1beta1.PyTorchTrainingJobSpec{ReplicaSpecs: specs}}
}

// decorate returns the main container of replica typ rank of pj.
func decorate(pj *batchv1beta1.PyTorchTrainingJob, typ string, rank int32) corev1.Container {
	job := Kind{}.View(pj)
	r := job.Replica(typ)
	pod := &corev1.Pod{Spec: *r.Template.Spec.DeepCopy()}
	Kind{}.Decorate(pod, r, rank, job)
	return pod.Spec.Containers[0]
}

func env(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		out[e.Name] = e.Value
	}
	return out
}

func TestEnvMasterFirst(t *testing.T) {
	// The master type leads and takes rank 0 wherever it is listed.
	pj := ptj(replica("worker", 3, []string{"python", "train.py"}), replica("master", 1, []string{"python", "train.py"}))
	pj.Spec.ReplicaSpecs[1].Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "pytorchjob-port", ContainerPort: 29500}}
	want := map[string]string{
		"PYTHONUNBUFFERED": "1", "MASTER_PORT": "29500", "PET_MASTER_PORT": "29500", "MASTER_ADDR": "pt-master-0", "PET_MASTER_ADDR": "pt-master-0",
		"WORLD_SIZE": "4", "RANK": "3", "PET_NODE_RANK": "3", "PET_NNODES": "4",
	}
	c := decorate(pj, "worker", 2)
	if diff := cmp.Diff(want, env(c)); diff != "" {
		t.Errorf("worker 2 env (-want +got):\n%s", diff)
	}
	if !cmp.Equal(c.Command, []string{"python", "train.py"}) {
		t.Errorf("command %q changed without torchrun", c.Command)
	}
	if r := env(decorate(pj, "master", 0))["RANK"]; r != "0" {
		t.Errorf("master RANK %s", r)
	}
}

func TestEnvWorkersOnly(t *testing.T) {
	// Without a master, worker 0 leads.
	pj := ptj(replica("worker", 4, []string{"python", "dist_mnist.py"}))
	e := env(decorate(pj, "worker", 1))
	if e["MASTER_ADDR"] != "pt-worker-0" || e["MASTER_PORT"] != "23456" || e["RANK"] != "1" || e["WORLD_SIZE"] != "4" {
		t.Errorf("env %v", e)
	}
}

func TestTorchrun(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cmd, args []string
		config    batchv1beta1.TorchrunConfig
		gpus      int64
		wantArgs  []string
	}{
		{"python and args", []string{"python"}, []string{"dist_mnist.py", "--epochs=1"},
			batchv1beta1.TorchrunConfig{Enabled: true, ProcPerNode: "4", RdzvBackend: "c10d", MaxRestarts: ptr.To[int32](10)}, 0,
			[]string{"--nnodes=2", "--nproc_per_node=4", "--rdzv_backend=c10d", "--rdzv_endpoint=pt-node-0:23456", "--rdzv_id=uid-1", "--max_restarts=10", "dist_mnist.py", "--epochs=1"}},
		{"script in command", []string{"/usr/bin/python3.11", "train.py"}, nil,
			batchv1beta1.TorchrunConfig{Enabled: true}, 0,
			[]string{"--nnodes=2", "--nproc_per_node=1", "--rdzv_backend=c10d", "--rdzv_endpoint=pt-node-0:23456", "--rdzv_id=uid-1", "train.py"}},
		{"module", []string{"python"}, []string{"-m", "training.module"},
			batchv1beta1.TorchrunConfig{Enabled: true, RdzvBackend: "etcd-v2", ExtraOptions: []string{"--monitor_interval=1"}}, 0,
			[]string{"--nnodes=2", "--nproc_per_node=1", "--rdzv_backend=etcd-v2", "--rdzv_endpoint=pt-node-0:23456", "--rdzv_id=uid-1", "--monitor_interval=1", "-m", "training.module"}},
		{"gpu", []string{"python"}, []string{"train.py"},
			batchv1beta1.TorchrunConfig{Enabled: true, ProcPerNode: "gpu", MinNodes: ptr.To[int32](1)}, 8,
			[]string{"--nnodes=1:2", "--nproc_per_node=8", "--rdzv_backend=c10d", "--rdzv_endpoint=pt-node-0:23456", "--rdzv_id=uid-1", "train.py"}},
		{"not python", []string{"/opt/train.sh"}, []string{"--x"},
			batchv1beta1.TorchrunConfig{Enabled: true}, 0,
			[]string{"--nnodes=2", "--nproc_per_node=1", "--rdzv_backend=c10d", "--rdzv_endpoint=pt-node-0:23456", "--rdzv_id=uid-1", "--no_python", "/opt/train.sh", "--x"}},
	} {
		pj := ptj(replica("node", 2, tc.cmd, tc.args...))
		pj.Spec.TorchrunConfig = &tc.config
		if tc.gpus > 0 {
			pj.Spec.ReplicaSpecs[0].Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(tc.gpus, resource.DecimalSI)}
		}
		c := decorate(pj, "node", 1)
		if !cmp.Equal(c.Command, []string{"torchrun"}) || !cmp.Equal(c.Args, tc.wantArgs) {
			t.Errorf("%s: command %q args %q, want torchrun %q", tc.name, c.Command, c.Args, tc.wantArgs)
		}
		if e := env(c); e["PET_NPROC_PER_NODE"] == "" {
			t.Errorf("%s: no PET_NPROC_PER_NODE in %v", tc.name, e)
		}
	}
}

func TestElastic(t *testing.T) {
	pj := ptj(replica("master", 1, []string{"python"}), replica("worker", 2, []string{"python"}))
	pj.Spec.TorchrunConfig = &batchv1beta1.TorchrunConfig{Enabled: true}
	pj.Spec.Elastic = &batchv1beta1.ElasticConfig{Enabled: true, MinReplicas: ptr.To[int32](2), MaxReplicas: ptr.To[int32](6), ExpectedReplicas: ptr.To[int32](5)}
	job := Kind{}.View(pj)
	if job.Replica("master").Replicas != 1 || job.Replica("worker").Replicas != 4 || job.MinMember != 2 || job.Replica("worker").RoleMin != 1 {
		t.Errorf("view: master %d worker %d (role min %d) minMember %d", job.Replica("master").Replicas, job.Replica("worker").Replicas, job.Replica("worker").RoleMin, job.MinMember)
	}
	if e := env(decorate(pj, "worker", 3)); e["PET_NNODES"] != "2:6" || e["RANK"] != "4" {
		t.Errorf("env %v", e)
	}
	// Kept within bounds.
	pj.Spec.Elastic.ExpectedReplicas = ptr.To[int32](100)
	if n := (Kind{}).View(pj).Total(); n != 6 {
		t.Errorf("expected 100: %d replicas, want 6", n)
	}
	pj.Spec.Elastic.ExpectedReplicas = nil
	if n := (Kind{}).View(pj).Total(); n != 3 {
		t.Errorf("no expectedReplicas: %d replicas, want the spec's 3", n)
	}
	// Without torchrun it is not elastic.
	pj.Spec.TorchrunConfig = nil
	if job := (Kind{}).View(pj); job.MinMember != 0 || job.Total() != 3 {
		t.Errorf("without torchrun: minMember %d total %d", job.MinMember, job.Total())
	}
}

func TestShare(t *testing.T) {
	pj := ptj(replica("a", 1, nil), replica("b", 1, nil), replica("c", 1, nil))
	pj.Spec.ReplicaSpecs[0].ScalingWeight = ptr.To[int32](1)
	pj.Spec.ReplicaSpecs[1].ScalingWeight = ptr.To[int32](2)
	w := weights(pj)
	for total, want := range map[int32]map[string]int32{
		0: {"a": 0, "b": 0}, 1: {"a": 0, "b": 1}, 3: {"a": 1, "b": 2}, 4: {"a": 1, "b": 3}, 5: {"a": 2, "b": 3},
	} {
		if got := share(total, w, pj); !cmp.Equal(got, want) {
			t.Errorf("share(%d) = %v, want %v", total, got, want)
		}
	}
	if w := weights(ptj(replica("master", 1, nil), replica("node", 1, nil))); !cmp.Equal(w, map[string]int32{"node": 1}) {
		t.Errorf("default weights %v, want the last type", w)
	}
}

func TestValidate(t *testing.T) {
	pj := ptj(replica("master", 0, nil), replica("worker", 1, nil))
	pj.Spec.Elastic = &batchv1beta1.ElasticConfig{Enabled: true, MinReplicas: ptr.To[int32](3), MaxReplicas: ptr.To[int32](2)}
	var got []string
	for _, e := range (Kind{}).Validate(pj, nil) {
		got = append(got, e.Error())
	}
	want := []string{
		"spec.replicaSpecs[0].replicas: Invalid value: 0: the master type (master) needs at least one replica",
		"spec.elastic.enabled: Invalid value: true: elastic training needs spec.torchrunConfig.enabled",
		"spec.elastic.minReplicas: Invalid value: 3: must not exceed maxReplicas",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	old := ptj(replica("worker", 1, nil))
	old.Spec.Elastic = &batchv1beta1.ElasticConfig{MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](4)}
	cur := old.DeepCopy()
	cur.Spec.Elastic.ExpectedReplicas = ptr.To[int32](3)
	if errs := (Kind{}).Validate(cur, old); len(errs) != 0 {
		t.Errorf("changing expectedReplicas: %v", errs)
	}
	cur.Spec.Elastic.MaxReplicas = nil
	if errs := (Kind{}).Validate(cur, old); len(errs) != 1 || errs[0].Field != "spec.elastic.maxReplicas" {
		t.Errorf("dropping maxReplicas: %v", errs)
	}
}
