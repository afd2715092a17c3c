package jobs

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/test/testutil"
)

// mpiWorkerTemplate is a worker template whose main container is named
// name and asks for resources.
func mpiWorkerTemplate(name string, limits corev1.ResourceList) corev1.PodTemplateSpec {
	c := container(name, "ignored")
	c.Resources.Limits = limits
	tmpl := template(c)
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyOnFailure // overridden, never refused
	return tmpl
}

// mpiTemplate is mpiWorkerTemplate for the replicaSpecs layout.
func mpiTemplate(name string, limits corev1.ResourceList) *corev1.PodTemplateSpec {
	tmpl := mpiWorkerTemplate(name, limits)
	return &tmpl
}

// waitRunningCount waits until the job's status counts n running pods.
func (e *env) waitRunningCount(t *testing.T, job client.Object, n int32) {
	t.Helper()
	ctx := testutil.SubtestContext(t)
	testutil.Poll(ctx, t, "running pods counted", func() (bool, string, error) {
		e.get(ctx, t, job)
		a := statusOf(job).Aggregate
		return a.Running == n, "", nil
	})
}

// checkSSHObjects checks the job's key Secret (an Ed25519 pair that
// matches) and ConfigMap (hostfile and client configuration).
func (e *env) checkSSHObjects(t *testing.T, ns, job, hostfile, authDir string) {
	t.Helper()
	ctx := testutil.SubtestContext(t)
	s := &corev1.Secret{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: job + "-ssh"}, s); err != nil {
		t.Fatal(err)
	}
	if owner := metav1.GetControllerOf(s); s.Type != corev1.SecretTypeSSHAuth || owner == nil || owner.Name != job {
		t.Errorf("secret type %s owner %+v", s.Type, owner)
	}
	signer, err := ssh.ParsePrivateKey(s.Data["ssh-privatekey"])
	if err != nil {
		t.Fatalf("private key: %v", err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(s.Data["ssh-publickey"])
	if err != nil {
		t.Fatalf("public key: %v", err)
	}
	if pub.Type() != ssh.KeyAlgoED25519 || !bytes.Equal(pub.Marshal(), signer.PublicKey().Marshal()) {
		t.Errorf("public key %s does not match the private key", pub.Type())
	}
	cm := &corev1.ConfigMap{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: job + "-config"}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["hostfile"] != hostfile {
		t.Errorf("hostfile %q, want %q", cm.Data["hostfile"], hostfile)
	}
	if cfg := cm.Data["ssh_config"]; !strings.Contains(cfg, "IdentityFile "+authDir+"/id_ed25519\n") || !strings.Contains(cfg, "StrictHostKeyChecking no") {
		t.Errorf("ssh_config %q", cfg)
	}
	for k, v := range cm.Data {
		if strings.Contains(v, "PRIVATE KEY") {
			t.Errorf("ConfigMap key %s holds a private key", k)
		}
	}
}

// mountOf returns the mount path of volume name in c.
func mountOf(c corev1.Container, name string) string {
	for _, m := range c.VolumeMounts {
		if m.Name == name {
			return m.MountPath
		}
	}
	return ""
}

// testMPIJobSeedLayout: the seed's layout. The workers run sshd with the
// job's key; the launcher, derived from the worker template without its
// GPUs, appears only once every worker is Ready and runs mpirun with the
// hostfile, --prefix, the MCA pairs, the extra arguments and cmd. Its exit
// decides the job; cleanUpWorkers deletes the workers and keeps it.
func testMPIJobSeedLayout(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	job := &batchv1beta1.MPIJob{}
	job.Namespace, job.Name = ns, "mpi"
	job.Spec = batchv1beta1.MPIJobSpec{
		Worker: &batchv1beta1.MPIWorkerSpec{
			Replicas:     ptr.To[int32](2),
			ExtraMPIArgs: []string{"-N", "2", "--allow-run-as-root"},
			Cmd:          []string{"python3", "allreduce.py"},
			Template:     mpiWorkerTemplate("mpi-worker", corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"), corev1.ResourceCPU: resource.MustParse("1")}),
		},
		MCA:       map[string]string{"pml": "ob1", "btl": "^openib"},
		MPIHome:   "/usr/local",
		SSH:       &batchv1beta1.MPISSHConfig{SSHDPath: "/usr/sbin/sshd"},
		RunPolicy: batchv1beta1.MPIRunPolicy{CleanUpWorkers: true},
	}
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "mpi", "mpi-worker-0", "mpi-worker-1")
	e.checkSSHObjects(t, ns, "mpi", "mpi-worker-0 slots=2\nmpi-worker-1 slots=2\n", "/root/.ssh")
	w := pods["mpi-worker-1"]
	c := w.Spec.Containers[0]
	if len(c.Command) != 6 || c.Command[0] != "/bin/sh" || c.Command[4] != "/usr/sbin/sshd" || c.Command[5] != "/root/.ssh" || c.Args != nil {
		t.Errorf("worker command %q args %q, want sshd through /bin/sh", c.Command, c.Args)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.TCPSocket == nil || c.ReadinessProbe.TCPSocket.Port.IntValue() != 22 {
		t.Errorf("worker readiness probe %+v, want TCP 22", c.ReadinessProbe)
	}
	if mountOf(c, "ssh-auth") != "/root/.ssh" || w.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("worker mounts %+v restartPolicy %s", c.VolumeMounts, w.Spec.RestartPolicy)
	}

	e.setPod(ctx, t, pods["mpi-worker-0"], corev1.PodRunning, nil)
	e.waitRunningCount(t, job, 1)
	if _, ok := e.pods(ctx, t, ns, "mpi")["mpi-launcher"]; ok {
		t.Fatal("the launcher was created before every worker was Ready")
	}
	e.setPod(ctx, t, pods["mpi-worker-1"], corev1.PodRunning, nil)
	pods = e.waitPods(ctx, t, ns, "mpi", "mpi-worker-0", "mpi-worker-1", "mpi-launcher")
	l := pods["mpi-launcher"]
	lc := l.Spec.Containers[0]
	want := []string{"/usr/local/bin/mpirun", "--prefix", "/usr/local", "--hostfile", "/etc/mpi/hostfile",
		"--mca", "btl", "^openib", "--mca", "pml", "ob1", "-N", "2", "--allow-run-as-root", "python3", "allreduce.py"}
	if !cmp.Equal(lc.Command, want) || lc.Args != nil {
		t.Errorf("launcher command %q args %q, want %q", lc.Command, lc.Args, want)
	}
	if env := envOf(lc); env["OMPI_MCA_plm_rsh_args"] != "-F /root/.ssh/config" || env["K_MPI_JOB_ROLE"] != "launcher" {
		t.Errorf("launcher env %v", env)
	}
	if _, ok := lc.Resources.Limits["nvidia.com/gpu"]; ok || lc.Resources.Limits.Cpu().String() != "1" {
		t.Errorf("launcher limits %v, want the worker's without GPUs", lc.Resources.Limits)
	}
	if mountOf(lc, "job-config") != "/etc/mpi" || mountOf(lc, "ssh-auth") != "/root/.ssh" || lc.ReadinessProbe != nil {
		t.Errorf("launcher mounts %+v probe %+v", lc.VolumeMounts, lc.ReadinessProbe)
	}
	if l.Labels[jobs.ReplicaTypeLabel] != "launcher" || l.Labels["mpijob-replica"] != "mpi-launcher" {
		t.Errorf("launcher labels %v", l.Labels)
	}

	e.setPod(ctx, t, l, corev1.PodRunning, nil)
	e.waitPhase(ctx, t, job, batchv1beta1.JobRunning)
	e.setPod(ctx, t, l, corev1.PodSucceeded, nil)
	s := e.waitPhase(ctx, t, job, batchv1beta1.JobSucceeded)
	if c := condition(t, s, batchv1beta1.JobCompleted); c.Status != corev1.ConditionTrue {
		t.Errorf("Completed %+v", c)
	}
	e.waitPods(ctx, t, ns, "mpi", "mpi-launcher")
	e.checkKeyNotLeaked(t, ns, job)
}

// checkKeyNotLeaked checks that the job's private key appears in none of
// the namespace's events, not in the job's status and nowhere in the
// controllers' log (captured at every verbosity): not as PEM, not a line
// of its body, and not base64-encoded as a Secret's data is in JSON. The
// request and response bodies client-go traces from -v=8 are searched
// decoded from their hex dump.
func (e *env) checkKeyNotLeaked(t *testing.T, ns string, job client.Object) {
	t.Helper()
	ctx := testutil.SubtestContext(t)
	s := &corev1.Secret{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: job.GetName() + "-ssh"}, s); err != nil {
		t.Fatal(err)
	}
	pem := s.Data["ssh-privatekey"]
	body := strings.Split(strings.TrimSpace(string(pem)), "\n")[1] // a line of the key itself
	encoded := base64.StdEncoding.EncodeToString(pem)
	encoded = encoded[len(encoded)/2 : len(encoded)/2+40] // past the header all keys share
	leaks := func(text string) bool {
		return strings.Contains(text, body) || strings.Contains(text, "PRIVATE KEY") || strings.Contains(text, encoded)
	}
	var events eventsv1.EventList
	if err := e.c.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	e.get(ctx, t, job)
	status, err := json.Marshal(statusOf(job))
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{"the job's status": string(status)}
	for _, ev := range events.Items {
		texts["event "+ev.Name] = ev.Note
	}
	for i, line := range strings.Split(e.controllers.Log(), "\n") {
		where := fmt.Sprintf("line %d of the controllers' log", i+1)
		if trace, ok := tracedBody(line); ok {
			texts[where+", decoded"] = trace
		}
		texts[where] = line
	}
	for where, text := range texts {
		if leaks(text) {
			t.Errorf("the private key shows in %s: %q", where, text)
		}
	}
}

// tracedBody returns the body of a line of client-go's body trace
// ("Request Body" or "Response Body"), hex dumps decoded and followed by
// the dump itself.
func tracedBody(line string) (string, bool) {
	if !strings.Contains(line, `"msg"="Request Body"`) && !strings.Contains(line, `"msg"="Response Body"`) {
		return "", false
	}
	_, rest, ok := strings.Cut(line, `"body"=`)
	if !ok {
		return "", false
	}
	quoted, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", false
	}
	text, err := strconv.Unquote(quoted)
	if err != nil {
		return "", false
	}
	var raw []byte
	for _, l := range strings.Split(text, "\n") {
		m := hexDumpLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for _, f := range strings.Fields(m[1]) {
			b, err := hex.DecodeString(f)
			if err != nil {
				return text, true
			}
			raw = append(raw, b...)
		}
	}
	return string(raw) + "\n" + text, true
}

// hexDumpLine is a line of encoding/hex's Dump: offset, bytes, characters.
var hexDumpLine = regexp.MustCompile(`^[0-9a-f]{8}  ((?:[0-9a-f]{2}  ?)+) *\|`)

// testMPIJobReplicaSpecs: the newer layout. An empty launcher template is
// derived from the workers'; a worker's CPUs are its slots; a launcher
// that fails fails the job once its restart limit is spent.
func testMPIJobReplicaSpecs(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	job := &batchv1beta1.MPIJob{}
	job.Namespace, job.Name = ns, "mpi2"
	job.Spec = batchv1beta1.MPIJobSpec{
		ReplicaSpecs: []batchv1beta1.MPIReplicaSpec{
			{Type: "launcher", RestartPolicy: &batchv1beta1.RestartPolicy{Policy: "OnFailure", Limit: 1}},
			{Type: "worker", Replicas: ptr.To[int32](3), Template: mpiTemplate("worker", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")})},
		},
		MPIConfig: &batchv1beta1.MPIConfig{Script: []string{"./random_walk", "20"}, ExtraArgs: []string{"--oversubscribe"}},
		SSH:       &batchv1beta1.MPISSHConfig{SSHAuthMountPath: "/home/mpi/.ssh"},
	}
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	e.waitPods(ctx, t, ns, "mpi2", "mpi2-worker-0", "mpi2-worker-1", "mpi2-worker-2")
	e.checkSSHObjects(t, ns, "mpi2", "mpi2-worker-0 slots=2\nmpi2-worker-1 slots=2\nmpi2-worker-2 slots=2\n", "/home/mpi/.ssh")
	e.runAll(ctx, t, ns, "mpi2")
	pods := e.waitPods(ctx, t, ns, "mpi2", "mpi2-worker-0", "mpi2-worker-1", "mpi2-worker-2", "mpi2-launcher")
	lc := pods["mpi2-launcher"].Spec.Containers[0]
	want := []string{"mpirun", "--hostfile", "/etc/mpi/hostfile", "--oversubscribe", "./random_walk", "20"}
	if !cmp.Equal(lc.Command, want) || lc.Name != "worker" {
		t.Errorf("launcher container %s command %q, want %q", lc.Name, lc.Command, want)
	}
	if env := envOf(lc); env["OMPI_MCA_plm_rsh_args"] != "-F /home/mpi/.ssh/config" {
		t.Errorf("launcher env %v", env)
	}

	// One restart of the launcher, then failure.
	e.setPod(ctx, t, pods["mpi2-launcher"], corev1.PodFailed, map[string]int32{"worker": 1})
	again := e.waitRecreated(t, pods["mpi2-launcher"])
	e.setPod(ctx, t, again, corev1.PodFailed, map[string]int32{"worker": 1})
	s := e.waitPhase(ctx, t, job, batchv1beta1.JobFailed)
	if c := condition(t, s, batchv1beta1.JobFailedCond); !strings.Contains(c.Message, "mpi2-launcher") {
		t.Errorf("Failed condition %+v", c)
	}
	if n := len(e.pods(ctx, t, ns, "mpi2")); n != 4 {
		t.Errorf("%d pods left, want all 4 (cleanUpWorkers is false)", n)
	}
	e.checkKeyNotLeaked(t, ns, job)
}

// testMPIJobRefused: the webhook and the schema refuse MPIJobs that cannot
// run, naming the field.
func testMPIJobRefused(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	seed := func() *batchv1beta1.MPIJob {
		j := &batchv1beta1.MPIJob{}
		j.Namespace, j.Name = ns, "bad"
		j.Spec.Worker = &batchv1beta1.MPIWorkerSpec{Template: mpiWorkerTemplate("mpi-worker", nil)}
		return j
	}
	for _, tc := range []struct {
		name   string
		change func(*batchv1beta1.MPIJob)
		want   string
	}{
		{"no mpi-worker", func(j *batchv1beta1.MPIJob) { j.Spec.Worker.Template.Spec.Containers[0].Name = "main" },
			"spec.worker.template.spec.containers: Required value: a container named mpi-worker"},
		{"both layouts", func(j *batchv1beta1.MPIJob) {
			j.Spec.ReplicaSpecs = []batchv1beta1.MPIReplicaSpec{{Type: "worker", Template: mpiTemplate("worker", nil)}}
		}, "spec.replicaSpecs: Invalid value"},
		{"mpiConfig with worker", func(j *batchv1beta1.MPIJob) { j.Spec.MPIConfig = &batchv1beta1.MPIConfig{Script: []string{"x"}} },
			"spec.mpiConfig belongs to the replicaSpecs layout"},
		{"auth path injection", func(j *batchv1beta1.MPIJob) {
			j.Spec.SSH = &batchv1beta1.MPISSHConfig{SSHAuthMountPath: "/root/.ssh; rm -rf /"}
		}, "spec.ssh.sshAuthMountPath: Invalid value"},
		{"relative sshd", func(j *batchv1beta1.MPIJob) { j.Spec.SSH = &batchv1beta1.MPISSHConfig{SSHDPath: "sshd"} },
			"spec.ssh.sshdPath: Invalid value"},
		{"mca name", func(j *batchv1beta1.MPIJob) { j.Spec.MCA = map[string]string{"--btl x": "tcp"} },
			"spec.mca[--btl x]: Invalid value"},
		{"no worker type", func(j *batchv1beta1.MPIJob) {
			j.Spec.Worker = nil
			j.Spec.ReplicaSpecs = []batchv1beta1.MPIReplicaSpec{{Type: "launcher", Template: mpiTemplate("launcher", nil)}}
		}, "spec.replicaSpecs: Required value: a replica type worker is required"},
		{"two launchers", func(j *batchv1beta1.MPIJob) {
			j.Spec.Worker = nil
			j.Spec.ReplicaSpecs = []batchv1beta1.MPIReplicaSpec{
				{Type: "launcher", Replicas: ptr.To[int32](2)},
				{Type: "worker", Template: mpiTemplate("worker", nil)},
			}
		}, "spec.replicaSpecs[0].replicas: Invalid value: 2: an MPIJob has one launcher"},
		{"new layout worker container", func(j *batchv1beta1.MPIJob) {
			j.Spec.Worker = nil
			j.Spec.ReplicaSpecs = []batchv1beta1.MPIReplicaSpec{{Type: "worker", Template: mpiTemplate("mpi-worker", nil)}}
		}, "spec.replicaSpecs[0].template.spec.containers: Required value: a container named worker"},
	} {
		j := seed()
		tc.change(j)
		err := e.c.Create(ctx, j)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// seedMPIJob is the MPIJob of the seed's MPIJob WorkflowTemplate, as users
// write it, with processesPerWorker and processRecovery.
const seedMPIJob = `
apiVersion: batch.tensorstack.dev/v1beta1
kind: MPIJob
metadata:
  name: walk
spec:
  worker:
    replicas: 2
    processesPerWorker: 3
    processRecovery:
      enable: true
      limit: 100
    cmd:
      - ./random_walk
      - "20"
      - "40"
      - "2"
    template:
      spec:
        containers:
          - name: mpi-worker
            image: t9kpublic/mpi-tutorial:2021022-2
            resources:
              limits:
                cpu: 100m
              requests:
                cpu: 50m
            workingDir: /usr/local/code
  mca:
    btl: ^openib
  runPolicy:
    cleanUpWorkers: true
  ssh:
    sshdPath: /usr/sbin/sshd
  mpiHome: /usr/local
`

// testMPIJobSeedFields: the seed's MPIJob is accepted under strict field
// validation; processesPerWorker is each worker's slots in the hostfile,
// and processRecovery makes the launcher's mpirun restart failed
// processes up to its limit.
func testMPIJobSeedFields(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	job := &batchv1beta1.MPIJob{}
	if err := yaml.UnmarshalStrict([]byte(seedMPIJob), job); err != nil {
		t.Fatal(err)
	}
	job.Namespace = ns
	if err := e.c.Create(ctx, job, client.FieldValidation("Strict")); err != nil {
		t.Fatalf("creating the seed's MPIJob: %v", err)
	}
	pods := e.waitPods(ctx, t, ns, "walk", "walk-worker-0", "walk-worker-1")
	e.checkSSHObjects(t, ns, "walk", "walk-worker-0 slots=3\nwalk-worker-1 slots=3\n", "/root/.ssh")
	for _, p := range pods {
		e.setPod(ctx, t, p, corev1.PodRunning, nil)
	}
	pods = e.waitPods(ctx, t, ns, "walk", "walk-worker-0", "walk-worker-1", "walk-launcher")
	want := []string{"/usr/local/bin/mpirun", "--prefix", "/usr/local", "--hostfile", "/etc/mpi/hostfile",
		"--enable-recovery", "--max-restarts", "100", "--mca", "btl", "^openib", "./random_walk", "20", "40", "2"}
	if got := pods["walk-launcher"].Spec.Containers[0].Command; !cmp.Equal(got, want) {
		t.Errorf("launcher command %q, want %q", got, want)
	}
}
