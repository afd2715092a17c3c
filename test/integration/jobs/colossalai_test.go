package jobs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

// testColossalAISeedLayout: the seed's layout. Workers run sshd; the
// launcher, the worker template with spec.launcher's image, working
// directory, env and resources, appears once every worker is Ready and
// runs colossalai run; its failure fails the job and no pod is recreated.
func testColossalAISeedLayout(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	w := container("worker", "ignored")
	w.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	job := &batchv1beta1.ColossalAIJob{}
	job.Namespace, job.Name = ns, "cai"
	job.Spec = batchv1beta1.ColossalAIJobSpec{
		SSH: &batchv1beta1.ColossalAISSHConfig{AuthMountPath: "/root/.ssh", SSHDPath: "/usr/sbin/sshd"},
		Launcher: &batchv1beta1.ColossalAILauncherSpec{
			Image: "colossalai:launcher", WorkingDir: "/workspace",
			Env:       []corev1.EnvVar{{Name: "LAUNCHER", Value: "1"}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		},
		Worker: &batchv1beta1.ColossalAIWorkerSpec{
			Replicas: ptr.To[int32](2), ProcPerWorker: ptr.To[int32](2),
			Command: []string{"train.py", "arg1"}, TorchArgs: []string{"--max_restarts=0"}, Template: template(w),
		},
	}
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "cai", "cai-worker-0", "cai-worker-1")
	e.checkSSHObjects(t, ns, "cai", "cai-worker-0\ncai-worker-1\n", "/root/.ssh")
	if c := pods["cai-worker-0"].Spec.Containers[0]; c.Command[4] != "/usr/sbin/sshd" || c.ReadinessProbe == nil {
		t.Errorf("worker command %q probe %+v", c.Command, c.ReadinessProbe)
	}
	e.runAll(ctx, t, ns, "cai")
	pods = e.waitPods(ctx, t, ns, "cai", "cai-worker-0", "cai-worker-1", "cai-launcher")
	lc := pods["cai-launcher"].Spec.Containers[0]
	want := []string{"colossalai", "run", "--hostfile", "/etc/colossalai/hostfile", "--nproc_per_node", "2",
		"--master_addr", "cai-worker-0", "--master_port", "29500", "--max_restarts=0", "train.py", "arg1"}
	if !cmp.Equal(lc.Command, want) || lc.Image != "colossalai:launcher" || lc.WorkingDir != "/workspace" {
		t.Errorf("launcher %s in %s runs %q, want %q", lc.Image, lc.WorkingDir, lc.Command, want)
	}
	if _, gpu := lc.Resources.Limits["nvidia.com/gpu"]; gpu || envOf(lc)["LAUNCHER"] != "1" || lc.ReadinessProbe != nil {
		t.Errorf("launcher resources %v env %v probe %+v", lc.Resources, envOf(lc), lc.ReadinessProbe)
	}
	e.setPod(ctx, t, pods["cai-launcher"], corev1.PodFailed, map[string]int32{"worker": 1})
	s := e.waitPhase(ctx, t, job, batchv1beta1.JobFailed)
	if c := condition(t, s, batchv1beta1.JobFailedCond); !strings.Contains(c.Message, "cai-launcher") {
		t.Errorf("Failed condition %+v", c)
	}
	if got := e.pods(ctx, t, ns, "cai")["cai-launcher"]; got == nil || got.UID != pods["cai-launcher"].UID {
		t.Error("the failed launcher was replaced")
	}
	e.checkKeyNotLeaked(t, ns, job)
}

// testColossalAIReplicaSpecs: the newer layout with an empty launcher
// template and torchConfig; cleanUpWorkers keeps only the launcher once it
// succeeds.
func testColossalAIReplicaSpecs(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	w := template(container("worker"))
	job := &batchv1beta1.ColossalAIJob{}
	job.Namespace, job.Name = ns, "cai2"
	job.Spec = batchv1beta1.ColossalAIJobSpec{
		ReplicaSpecs: []batchv1beta1.ColossalAIReplicaSpec{
			{Type: "launcher"},
			{Type: "worker", Replicas: ptr.To[int32](1), Template: &w},
		},
		TorchConfig: &batchv1beta1.TorchConfig{Script: []string{"train.py"}},
		RunPolicy:   batchv1beta1.MPIRunPolicy{CleanUpWorkers: true},
	}
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	e.waitPods(ctx, t, ns, "cai2", "cai2-worker-0")
	e.runAll(ctx, t, ns, "cai2")
	pods := e.waitPods(ctx, t, ns, "cai2", "cai2-worker-0", "cai2-launcher")
	if c := pods["cai2-launcher"].Spec.Containers[0]; !cmp.Equal(c.Command[len(c.Command)-1:], []string{"train.py"}) || c.Command[5] != "1" {
		t.Errorf("launcher command %q", c.Command)
	}
	e.setPod(ctx, t, pods["cai2-launcher"], corev1.PodSucceeded, nil)
	e.waitPhase(ctx, t, job, batchv1beta1.JobSucceeded)
	e.waitPods(ctx, t, ns, "cai2", "cai2-launcher")
	e.checkKeyNotLeaked(t, ns, job)
}

// testColossalAIRefused: mixed layouts, a missing worker type and unsafe
// paths are refused, naming the field.
func testColossalAIRefused(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	w := template(container("worker"))
	for _, tc := range []struct {
		name string
		spec batchv1beta1.ColossalAIJobSpec
		want string
	}{
		{"both layouts", batchv1beta1.ColossalAIJobSpec{
			Worker:       &batchv1beta1.ColossalAIWorkerSpec{Template: w},
			ReplicaSpecs: []batchv1beta1.ColossalAIReplicaSpec{{Type: "worker", Template: &w}},
		}, "spec.replicaSpecs: Invalid value"},
		{"torchConfig with worker", batchv1beta1.ColossalAIJobSpec{
			Worker: &batchv1beta1.ColossalAIWorkerSpec{Template: w}, TorchConfig: &batchv1beta1.TorchConfig{Script: []string{"x"}},
		}, "spec.torchConfig belongs to the replicaSpecs layout"},
		{"no worker", batchv1beta1.ColossalAIJobSpec{
			ReplicaSpecs: []batchv1beta1.ColossalAIReplicaSpec{{Type: "launcher"}},
		}, "spec.replicaSpecs: Required value: a replica type worker is required"},
		{"sshd path", batchv1beta1.ColossalAIJobSpec{
			Worker: &batchv1beta1.ColossalAIWorkerSpec{Template: w}, SSH: &batchv1beta1.ColossalAISSHConfig{SSHDPath: "/usr/sbin/sshd -o X"},
		}, "spec.ssh.sshdPath: Invalid value"},
	} {
		job := &batchv1beta1.ColossalAIJob{}
		job.Namespace, job.Name, job.Spec = ns, "bad", tc.spec
		if err := e.c.Create(ctx, job); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}
