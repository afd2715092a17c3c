//go:build e2e

package e2e

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/test/cluster"
)

// finalLoss matches the last line of train.py.
var finalLoss = regexp.MustCompile(`rank=(\d+) world_size=(\d+) initial_loss=([0-9.]+) final_loss=([0-9.]+)`)

// checkSameLoss checks that every pod logged the final line of train.py
// with the world size want and one final loss, smaller than the initial
// one, and returns that loss.
func checkSameLoss(t *testing.T, ns string, pods []string, world int) string {
	t.Helper()
	loss := ""
	ranks := map[string]bool{}
	for _, p := range pods {
		m := waitLogMatch(t, ns, p, finalLoss)
		if m[2] != strconv.Itoa(world) {
			t.Errorf("%s trained in a world of %s, want %d", p, m[2], world)
		}
		initial, _ := strconv.ParseFloat(m[3], 64)
		final, _ := strconv.ParseFloat(m[4], 64)
		if final >= initial/10 {
			t.Errorf("%s: the loss went from %s to %s only", p, m[3], m[4])
		}
		if loss != "" && m[4] != loss {
			t.Errorf("%s ends with loss %s, another rank with %s", p, m[4], loss)
		}
		loss = m[4]
		ranks[m[1]] = true
	}
	if len(ranks) != len(pods) {
		t.Errorf("the pods logged ranks %v, want %d distinct ones", ranks, len(pods))
	}
	return loss
}

// TestPyTorchTrainingJobDDP trains data-parallel over gloo with a master
// and a worker that find each other by the master's Service name: both
// ranks end with the same model, so log the same final loss.
func TestPyTorchTrainingJobDDP(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createScripts(t, ns)
	c := crClient(t)
	job := &batchv1beta1.PyTorchTrainingJob{
		ObjectMeta: metav1.ObjectMeta{Name: "ddp", Namespace: ns},
		Spec: batchv1beta1.PyTorchTrainingJobSpec{ReplicaSpecs: []batchv1beta1.PyTorchReplicaSpec{
			{Type: "master", Replicas: ptr.To[int32](1), Template: torchTemplate()},
			{Type: "worker", Replicas: ptr.To[int32](1), Template: torchTemplate()},
		}},
	}
	if err := c.Create(jobContext(t), job); err != nil {
		t.Fatal(err)
	}
	// As a user would: t9k follows the worker's log from before its pod
	// exists to the job's end, and waits for the job, printing the
	// master's log.
	type result struct {
		out string
		err error
	}
	followed := make(chan result, 1)
	go func() {
		out, err := t9k(t, "pj", "logs", "ddp", "-f", "--type", "worker", "-p", ns)
		followed <- result{out, err}
	}()
	waited, err := t9k(t, "pj", "wait", "ddp", "--print-log", "--type", "master", "-p", ns, "--timeout", "15m", "--period", "2s")
	if err != nil {
		t.Errorf("t9k pj wait ddp --print-log: %v\n%s", err, waited)
	}
	if !finalLoss.MatchString(waited) {
		t.Errorf("t9k pj wait --print-log did not print the master's final loss:\n%s", waited)
	}
	waitJob(t, c, job, "Succeeded", phase(batchv1beta1.JobSucceeded))
	loss := checkSameLoss(t, ns, []string{"ddp-master-0", "ddp-worker-0"}, 2)
	t.Logf("both ranks of a world of 2 end with loss %s", loss)
	if out, err := t9k(t, "pj", "logs", "ddp", "-p", ns); err != nil || !strings.Contains(out, loss) {
		t.Errorf("t9k pj logs ddp (worker 0) = %v, without the final loss %s:\n%s", err, loss, out)
	}
	if f := <-followed; f.err != nil || !strings.Contains(f.out, loss) {
		t.Errorf("t9k pj logs ddp -f --type worker, started with the job, ended %v without the final loss %s:\n%s", f.err, loss, f.out)
	}
	if out, err := t9k(t, "pj", "describe", "ddp", "-p", ns); err != nil || !strings.Contains(out, "Succeeded") || !strings.Contains(out, "ddp-worker-0") {
		t.Errorf("t9k pj describe ddp = %v:\n%s", err, out)
	}
	if n := jobs.Condition(&job.Status.JobStatus, batchv1beta1.JobCompleted); n == nil || n.Status != corev1.ConditionTrue {
		t.Errorf("no Completed condition: %+v", job.Status.Conditions)
	}
}

// TestPyTorchTrainingJobElastic runs torchrun on two nodes of an elastic
// training (1 to 3), then raises expectedReplicas to 3: a third worker
// joins, torchrun restarts the training in a world of 3 without the first
// two pods being replaced, and the job succeeds.
func TestPyTorchTrainingJobElastic(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createScripts(t, ns)
	c := crClient(t)
	job := &batchv1beta1.PyTorchTrainingJob{
		ObjectMeta: metav1.ObjectMeta{Name: "elastic", Namespace: ns},
		Spec: batchv1beta1.PyTorchTrainingJobSpec{
			ReplicaSpecs: []batchv1beta1.PyTorchReplicaSpec{
				{Type: "worker", Replicas: ptr.To[int32](2), Template: torchTemplate("--grow-to=3")},
			},
			TorchrunConfig: &batchv1beta1.TorchrunConfig{
				Enabled: true, MaxRestarts: ptr.To[int32](3),
				// Close a rendezvous 3s after the least number of nodes
				// joined, rather than 30s; look for waiting nodes every
				// second. PyTorch 1.13 under Python 3.11 cannot read the
				// default --redirects and --tee (0: Python 3.11 no longer
				// lists a zero flag): set them for a local rank that does
				// not exist, which leaves rank 0's output on the console.
				ExtraOptions: []string{"--rdzv_conf=last_call_timeout=3", "--monitor_interval=1", "--redirects=1:1", "--tee=1:1"},
			},
			Elastic: &batchv1beta1.ElasticConfig{
				Enabled: true, MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](3), ExpectedReplicas: ptr.To[int32](2),
			},
		},
	}
	if err := c.Create(jobContext(t), job); err != nil {
		t.Fatal(err)
	}
	inWorldOf := func(n int) *regexp.Regexp {
		return regexp.MustCompile(fmt.Sprintf(`rank=\d+ world_size=%d host=\S+ training`, n))
	}
	for _, p := range []string{"elastic-worker-0", "elastic-worker-1"} {
		waitLogMatch(t, ns, p, inWorldOf(2))
	}
	before := jobPods(t, ns, "elastic")
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"elastic":{"expectedReplicas":3}}}`))
	if err := c.Patch(jobContext(t), job, patch); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"elastic-worker-0", "elastic-worker-1", "elastic-worker-2"} {
		waitLogMatch(t, ns, p, inWorldOf(3))
	}
	waitJob(t, c, job, "Succeeded", phase(batchv1beta1.JobSucceeded))
	loss := checkSameLoss(t, ns, []string{"elastic-worker-0", "elastic-worker-1", "elastic-worker-2"}, 3)
	t.Logf("the three ranks of a world of 3 end with loss %s", loss)
	after := jobPods(t, ns, "elastic")
	for name, p := range before {
		if after[name].UID != p.UID {
			t.Errorf("pod %s was replaced while the job scaled up", name)
		}
	}
	if len(after) != 3 {
		t.Errorf("the job has pods %v, want 3", slices.Sorted(maps.Keys(after)))
	}
}

// TestXGBoostTrainingJob trains XGBoost over the Rabit tracker that the
// master runs on MASTER_PORT: both replicas join the same world of 2 and
// end with the same model.
func TestXGBoostTrainingJob(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createScripts(t, ns)
	c := crClient(t)
	tmpl := workload("xgboost", cluster.XGBoostImage, "python3", scriptsDir+"/xgboost_train.py")
	job := &batchv1beta1.XGBoostTrainingJob{
		ObjectMeta: metav1.ObjectMeta{Name: "xgb", Namespace: ns},
		Spec: batchv1beta1.XGBoostTrainingJobSpec{ReplicaSpecs: []batchv1beta1.XGBoostReplicaSpec{
			{Type: batchv1beta1.XGBoostMaster, Replicas: ptr.To[int32](1), Template: tmpl},
			{Type: batchv1beta1.XGBoostWorker, Replicas: ptr.To[int32](1), Template: tmpl},
		}},
	}
	if err := c.Create(jobContext(t), job); err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, job, "Succeeded", phase(batchv1beta1.JobSucceeded))
	re := regexp.MustCompile(`rank=(\d) collective_rank=(\d) world_size=(\d+) final_logloss=[0-9.]+ model=([0-9a-f]+)`)
	models := map[string]bool{}
	collective := map[string]bool{}
	for _, p := range []string{"xgb-master-0", "xgb-worker-0"} {
		m := waitLogMatch(t, ns, p, re)
		if m[3] != "2" {
			t.Errorf("%s trained in a world of %s, want 2", p, m[3])
		}
		models[m[4]], collective[m[2]] = true, true
	}
	if len(models) != 1 || len(collective) != 2 {
		t.Errorf("models %v and tracker ranks %v: want one model and two ranks", slices.Sorted(maps.Keys(models)), slices.Sorted(maps.Keys(collective)))
	}
}

// TestGenericJobServiceAddresses runs three replicas that know each other
// only through the $(service...) variables the controller substitutes into
// their arguments: each reaches the other two and hears from both.
func TestGenericJobServiceAddresses(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createScripts(t, ns)
	c := crClient(t)
	tmpl := workload("peer", cluster.PyTorchImage, "python3", scriptsDir+"/rendezvous.py")
	tmpl.Spec.Containers[0].Args = []string{"$(rank)", "$(service.port[rdzv])",
		"$(service.peer[0].host)", "$(service.peer[1].host)", "$(service.peer[2].host)"}
	job := &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Name: "rdzv", Namespace: ns},
		Spec: batchv1beta1.GenericJobSpec{
			ReplicaSpecs: []batchv1beta1.ReplicaSpec{{Type: "peer", Replicas: ptr.To[int32](3), Template: tmpl}},
			Service:      &batchv1beta1.ServiceOption{Ports: []corev1.ServicePort{{Name: "rdzv", Port: 7777}}},
		},
	}
	if err := c.Create(jobContext(t), job); err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, job, "Succeeded", phase(batchv1beta1.JobSucceeded))
	pods := jobPods(t, ns, "rdzv")
	for i := range 3 {
		name := fmt.Sprintf("rdzv-peer-%d", i)
		args := pods[name].Spec.Containers[0].Args
		want := []string{strconv.Itoa(i), "7777", "rdzv-peer-0", "rdzv-peer-1", "rdzv-peer-2"}
		if strings.Join(args, " ") != strings.Join(want, " ") {
			t.Errorf("%s runs with %q, want %q", name, args, want)
		}
		m := waitLogMatch(t, ns, name, regexp.MustCompile(`rank=(\d) heard=([0-9,]+)`))
		if m[1] != strconv.Itoa(i) || m[2] != "0,1,2" {
			t.Errorf("%s: rank %s heard from %s, want rank %d hearing from 0,1,2", name, m[1], m[2], i)
		}
	}
}

// TestPyTorchTrainingJobExitCodeRestart has the worker exit with code 137
// (as if killed with SIGKILL) on its first attempt: under the ExitCode
// policy the controller recreates it, the training completes, and the
// status counts the restart.
func TestPyTorchTrainingJobExitCodeRestart(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createScripts(t, ns)
	c := crClient(t)
	job := &batchv1beta1.PyTorchTrainingJob{
		ObjectMeta: metav1.ObjectMeta{Name: "flaky", Namespace: ns},
		Spec: batchv1beta1.PyTorchTrainingJobSpec{ReplicaSpecs: []batchv1beta1.PyTorchReplicaSpec{
			{Type: "master", Replicas: ptr.To[int32](1), Template: torchTemplate("--attempts-key=worker")},
			{Type: "worker", Replicas: ptr.To[int32](1), RestartPolicy: batchv1beta1.ReplicaRestartExitCode,
				Template: torchTemplate("--attempts-key=worker")},
		}},
	}
	if err := c.Create(jobContext(t), job); err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, job, "Succeeded", phase(batchv1beta1.JobSucceeded))
	checkSameLoss(t, ns, []string{"flaky-master-0", "flaky-worker-0"}, 2)
	if m := waitLogMatch(t, ns, "flaky-worker-0", regexp.MustCompile(`attempt=(\d+)`)); m[1] != "2" {
		t.Errorf("the worker that finished was attempt %s, want 2", m[1])
	}
	if job.Status.BackoffCount != 1 {
		t.Errorf("backoffCount = %d, want 1", job.Status.BackoffCount)
	}
	restarts := map[string]int32{}
	for _, task := range job.Status.Tasks {
		restarts[task.Type] = task.RestartCount
	}
	if restarts["worker"] != 1 || restarts["master"] != 0 {
		t.Errorf("restarts per type %v, want worker 1 and master 0", restarts)
	}
}

// TestPyTorchTrainingJobPauseResume pauses a running training: its pods
// go and the job is Paused; resumed, with the shorter run of its
// resumeSpecs, it is Resuming, then Running, then Succeeded.
func TestPyTorchTrainingJobPauseResume(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createScripts(t, ns)
	c := crClient(t)
	resume := []string{scriptsDir + "/train.py", "--epochs=60"}
	job := &batchv1beta1.PyTorchTrainingJob{
		ObjectMeta: metav1.ObjectMeta{Name: "pause", Namespace: ns},
		Spec: batchv1beta1.PyTorchTrainingJobSpec{
			ReplicaSpecs: []batchv1beta1.PyTorchReplicaSpec{
				{Type: "master", Replicas: ptr.To[int32](1), Template: torchTemplate("--epochs=100000000")},
				{Type: "worker", Replicas: ptr.To[int32](1), Template: torchTemplate("--epochs=100000000")},
			},
			RunMode: &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{ResumeSpecs: []batchv1beta1.ResumeSpec{
				{Type: "master", Command: []string{"python3"}, Args: resume},
				{Type: "worker", Command: []string{"python3"}, Args: resume},
			}}},
		},
	}
	if err := c.Create(jobContext(t), job); err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, job, "Running", phase(batchv1beta1.JobRunning))
	training := regexp.MustCompile(`world_size=2 host=\S+ training`)
	for _, p := range []string{"pause-master-0", "pause-worker-0"} {
		waitLogMatch(t, ns, p, training)
	}
	setPause := func(on bool) {
		t.Helper()
		patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"runMode":{"pause":{"enabled":%v}}}}`, on)))
		if err := c.Patch(jobContext(t), job, patch); err != nil {
			t.Fatal(err)
		}
	}
	setPause(true)
	waitJob(t, c, job, "Paused", func(s *batchv1beta1.JobStatus) bool {
		cond := jobs.Condition(s, batchv1beta1.JobPausedCond)
		return s.Phase == batchv1beta1.JobPaused && cond != nil && cond.Status == corev1.ConditionTrue
	})
	waitNoPods(t, ns, "pause")

	setPause(false)
	var phases []batchv1beta1.JobPhase
	waitJob(t, c, job, "Succeeded", func(s *batchv1beta1.JobStatus) bool {
		if len(phases) == 0 || phases[len(phases)-1] != s.Phase {
			phases = append(phases, s.Phase)
		}
		return s.Phase == batchv1beta1.JobSucceeded
	})
	want := []batchv1beta1.JobPhase{batchv1beta1.JobResuming, batchv1beta1.JobRunning, batchv1beta1.JobSucceeded}
	if !inOrder(phases, want) {
		t.Errorf("after resuming, the job went through phases %v, want %v in order", phases, want)
	}
	checkSameLoss(t, ns, []string{"pause-master-0", "pause-worker-0"}, 2)
	if cond := jobs.Condition(&job.Status.JobStatus, batchv1beta1.JobPausedCond); cond == nil || cond.Status != corev1.ConditionFalse {
		t.Errorf("Paused condition after resuming: %+v", cond)
	}
}

// waitNoPods waits until the job has no pod left.
func waitNoPods(t *testing.T, ns, job string) {
	t.Helper()
	waitJobPods(t, ns, job, "gone", func(pods map[string]corev1.Pod) bool { return len(pods) == 0 })
}

// inOrder reports whether want appear in got in that order, possibly with
// other phases between them (a poll may see any of them).
func inOrder(got, want []batchv1beta1.JobPhase) bool {
	i := 0
	for _, p := range got {
		if i < len(want) && p == want[i] {
			i++
		}
	}
	return i == len(want)
}
