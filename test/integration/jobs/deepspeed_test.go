package jobs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

// testDeepSpeedJob: every worker runs sshd with the job's key, hostfile
// and env file; worker 0 runs the deepspeed launcher after the others'
// sshd answers; worker 0 decides the job.
func testDeepSpeedJob(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	c := container("worker", "ignored")
	c.Env = []corev1.EnvVar{{Name: "NCCL_DEBUG", Value: "INFO"}, {Name: "GREETING", Value: "it's fine"}}
	job := &batchv1beta1.DeepSpeedJob{}
	job.Namespace, job.Name = ns, "ds"
	job.Spec = batchv1beta1.DeepSpeedJobSpec{
		Worker: batchv1beta1.DeepSpeedWorkerSpec{Replicas: ptr.To[int32](2), Template: template(c)},
		Config: batchv1beta1.DeepSpeedConfig{
			Run:           &batchv1beta1.DeepSpeedRun{Python: []string{"/t9k/mnt/train.py", "--epochs=2"}},
			SlotPerWorker: ptr.To[int32](2),
		},
		RunPolicy: batchv1beta1.RunPolicy{CleanUpPolicy: batchv1beta1.CleanUpPolicyUnfinished},
	}
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "ds", "ds-worker-0", "ds-worker-1")
	e.checkSSHObjects(t, ns, "ds", "ds-worker-0 slots=2\nds-worker-1 slots=2\n", "/root/.ssh")
	cm := &corev1.ConfigMap{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ds-config"}, cm); err != nil {
		t.Fatal(err)
	}
	if got, want := cm.Data[".deepspeed_env"], "NCCL_DEBUG='INFO'\nGREETING='it'\\''s fine'\n"; got != want {
		t.Errorf("env file %q, want %q", got, want)
	}
	w0, w1 := pods["ds-worker-0"].Spec.Containers[0], pods["ds-worker-1"].Spec.Containers[0]
	if w1.Command[0] != "/bin/sh" || w1.Command[4] != "/usr/sbin/sshd" || w1.ReadinessProbe == nil {
		t.Errorf("worker 1 command %q probe %+v, want sshd", w1.Command, w1.ReadinessProbe)
	}
	want := []string{"deepspeed", "--hostfile", "/job/hostfile", "--launcher", "pdsh", "/t9k/mnt/train.py", "--epochs=2"}
	if len(w0.Command) < 4 || !cmp.Equal(w0.Command[4:], want) || !strings.Contains(w0.Command[2], "ssh -n -F") {
		t.Errorf("worker 0 command %q, want the launch script then %q", w0.Command, want)
	}
	env := envOf(w0)
	if env["DS_ENV_FILE"] != "/job/.deepspeed_env" || env["PDSH_SSH_ARGS_APPEND"] != "-F /root/.ssh/config" || env["WORLD_SIZE"] != "4" {
		t.Errorf("worker 0 env %v", env)
	}
	if mountOf(w0, "job-config") != "/job" || mountOf(w0, "ssh-auth") != "/root/.ssh" {
		t.Errorf("worker 0 mounts %+v", w0.VolumeMounts)
	}

	e.runAll(ctx, t, ns, "ds")
	e.waitPhase(ctx, t, job, batchv1beta1.JobRunning)
	e.setPod(ctx, t, pods["ds-worker-0"], corev1.PodSucceeded, nil)
	e.waitPhase(ctx, t, job, batchv1beta1.JobSucceeded)
	// Unfinished: worker 1's sshd runs on and is cleaned up.
	e.waitPods(ctx, t, ns, "ds", "ds-worker-0")
	e.checkKeyNotLeaked(t, ns, job)
}

// testDeepSpeedRefused: config.run with none or several entries and a
// launcher other than pdsh are refused, naming the field.
func testDeepSpeedRefused(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	for _, tc := range []struct {
		cfg  batchv1beta1.DeepSpeedConfig
		want string
	}{
		{batchv1beta1.DeepSpeedConfig{}, "spec.config.run: Required value"},
		{batchv1beta1.DeepSpeedConfig{Run: &batchv1beta1.DeepSpeedRun{Python: []string{"a.py"}, Module: []string{"m"}}}, "spec.config.run: Invalid value: 2: set exactly one of python, module and exec"},
		{batchv1beta1.DeepSpeedConfig{CustomCommand: "x", SlotsPerWorker: ptr.To[int32](0)}, "spec.config.slotsPerWorker"},
		{batchv1beta1.DeepSpeedConfig{CustomCommand: "x", OtherArgs: []string{"--launcher=openmpi"}}, "spec.config.otherArgs[0]: Invalid value"},
	} {
		job := &batchv1beta1.DeepSpeedJob{}
		job.Namespace, job.Name = ns, "bad"
		job.Spec = batchv1beta1.DeepSpeedJobSpec{Worker: batchv1beta1.DeepSpeedWorkerSpec{Template: template(container("worker"))}, Config: tc.cfg}
		if err := e.c.Create(ctx, job); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("config %+v: got %v, want an error with %q", tc.cfg, err, tc.want)
		}
	}
}
