//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
	"github.com/accelstack/accelstack/pkg/elasticjob"
	"github.com/accelstack/accelstack/test/cluster"
)

// killWork kills the work process of an elastic_ps.py task with SIGKILL, as
// the kernel's OOM killer or a crash would end it.
const killWork = "import os, signal; os.kill(int(open('/tmp/child.pid').read()), signal.SIGKILL)"

// stopWork makes the work process of an elastic_ps.py task end well.
const stopWork = "open('/tmp/stop', 'w').close()"

// taskLine is the first line elastic_ps.py prints: its task in TF_CONFIG
// and WORKER_NUM; then comes TF_CONFIG itself.
var (
	taskLine     = regexp.MustCompile(`role=(\S+) index=(\d+) worker_num=(\S+)`)
	tfConfigLine = regexp.MustCompile(`(?m)^TF_CONFIG=(.*)$`)
	heartbeat    = regexp.MustCompile(`heartbeat \d+ pid=(\d+)`)
)

// TestElasticJobRelaunchAndScale runs a DLRover ElasticJob of 1 PS and 2
// workers. A worker's work process is killed: its pod fails with 137 and
// the controller relaunches the rank as a new pod, with the next id and
// restart-count 1, leaving the other pods be. A ScalePlan then takes the
// workers to 3: the third worker's pod starts with the TF_CONFIG of the
// controller's sparse cluster, rank 2 seeing workers 0 to 2. Once the
// workers end well the job succeeds and the controller stops the PS.
func TestElasticJobRelaunchAndScale(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createScripts(t, ns)
	c := crClient(t)
	const name = "edl"
	task := func(replicas int32) *elasticv1alpha1.ReplicaSpec {
		s := &elasticv1alpha1.ReplicaSpec{}
		s.Replicas = replicas
		s.Template = workload("main", cluster.PyTorchImage, "python3", scriptsDir+"/elastic_ps.py")
		s.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		return s
	}
	job := &elasticv1alpha1.ElasticJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: elasticv1alpha1.ElasticJobSpec{
			DistributionStrategy: elasticv1alpha1.ParameterServerStrategy,
			ReplicaSpecs: map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{
				elasticv1alpha1.ReplicaTypePS:     task(1),
				elasticv1alpha1.ReplicaTypeWorker: task(2),
			},
		},
	}
	if err := c.Create(jobContext(t), job); err != nil {
		t.Fatal(err)
	}
	e := &elasticRun{t: t, c: c, ns: ns, job: name}
	ps0 := elasticjob.TaskName(name, elasticv1alpha1.ReplicaTypePS, 0)
	worker := func(id int) string { return elasticjob.TaskName(name, elasticv1alpha1.ReplicaTypeWorker, id) }

	// 1 PS and 2 workers, each told its task and the cluster it sees.
	first := e.waitPods("running as 1 PS and 2 workers", func(pods map[string]corev1.Pod) bool {
		return len(pods) == 3 && allRunning(pods, ps0, worker(0), worker(1))
	})
	e.checkTask(ps0, elasticv1alpha1.ReplicaTypePS, 0, 2, "None")
	e.checkTask(worker(0), elasticv1alpha1.ReplicaTypeWorker, 0, 1, "2")
	e.checkTask(worker(1), elasticv1alpha1.ReplicaTypeWorker, 1, 2, "2")
	e.waitPhase(elasticv1alpha1.JobRunning)

	// Worker 1's work is killed: the pod fails and rank 1 comes back as
	// pod id 2, restart-count 1.
	e.exec(worker(1), killWork)
	relaunched := worker(2)
	after := e.waitPods("relaunched worker 1 as "+relaunched, func(pods map[string]corev1.Pod) bool {
		failed, ok := pods[worker(1)]
		return ok && failed.Status.Phase == corev1.PodFailed && allRunning(pods, relaunched)
	})
	if code := exitCode(after[worker(1)]); code != 137 {
		t.Errorf("killed worker %s exited %d, want 137", worker(1), code)
	}
	waitLogMatch(t, ns, worker(1), regexp.MustCompile(`work killed by signal 9`))
	r := after[relaunched]
	wantLabels := map[string]string{
		elasticv1alpha1.ReplicaTypeLabelKey: "worker", elasticv1alpha1.ReplicaIndexLabelKey: "2",
		elasticv1alpha1.RankIndexLabelKey: "1", elasticv1alpha1.RestartCountLabelKey: "1",
	}
	for k, v := range wantLabels {
		if r.Labels[k] != v {
			t.Errorf("relaunched pod %s: label %s=%q, want %q (labels %v)", relaunched, k, r.Labels[k], v, r.Labels)
		}
	}
	if r.UID == first[worker(1)].UID {
		t.Errorf("relaunched pod %s has the UID of the killed pod", relaunched)
	}
	if len(after) != 4 {
		t.Errorf("pods after the relaunch %v, want the 3 first and %s", slices.Sorted(maps.Keys(after)), relaunched)
	}
	untouched(t, first, after, ps0, worker(0))
	e.checkTask(relaunched, elasticv1alpha1.ReplicaTypeWorker, 1, 2, "")

	// A user's ScalePlan takes the workers to 3: rank 2 is a new pod, id 3.
	plan := &elasticv1alpha1.ScalePlan{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-scaleplan-0", Namespace: ns, Labels: map[string]string{
			elasticv1alpha1.JobNameLabelKey: name, elasticv1alpha1.ScaleTypeLabelKey: elasticv1alpha1.ScaleTypeManual,
		}},
		Spec: elasticv1alpha1.ScaleSpec{
			OwnerJob: name,
			ReplicaResourceSpecs: map[elasticv1alpha1.ReplicaType]elasticv1alpha1.ReplicaResourceSpec{
				elasticv1alpha1.ReplicaTypeWorker: {Replicas: 3},
			},
		},
	}
	if err := c.Create(jobContext(t), plan); err != nil {
		t.Fatal(err)
	}
	e.waitPlan(plan.Name, elasticv1alpha1.JobSucceeded)
	third := worker(3)
	scaled := e.waitPods("scaled to 3 workers", func(pods map[string]corev1.Pod) bool {
		return allRunning(pods, third)
	})
	w3 := scaled[third]
	if w3.Labels[elasticv1alpha1.RankIndexLabelKey] != "2" || w3.Labels[elasticv1alpha1.RestartCountLabelKey] != "0" {
		t.Errorf("third worker %s labels %v, want rank-index 2 and restart-count 0", third, w3.Labels)
	}
	if len(scaled) != 5 {
		t.Errorf("pods after the ScalePlan %v, want those before and %s", slices.Sorted(maps.Keys(scaled)), third)
	}
	untouched(t, after, scaled, ps0, worker(0), worker(1), relaunched)
	e.checkTask(third, elasticv1alpha1.ReplicaTypeWorker, 2, 3, "3")
	svc, err := kube.CoreV1().Services(ns).Get(jobContext(t), elasticjob.TaskName(name, elasticv1alpha1.ReplicaTypeWorker, 2), metav1.GetOptions{})
	if err != nil {
		t.Errorf("no Service for worker rank 2: %v", err)
	} else if got := svc.Spec.Selector[elasticv1alpha1.RankIndexLabelKey]; got != "2" {
		t.Errorf("Service %s selects rank %q, want 2", svc.Name, got)
	}

	// The workers end well: the job succeeds and the controller stops the
	// PS.
	for _, w := range []string{worker(0), relaunched, third} {
		e.exec(w, stopWork)
	}
	e.waitPhase(elasticv1alpha1.JobSucceeded)
	final := e.waitPods("PS stopped", func(pods map[string]corev1.Pod) bool {
		_, ps := pods[ps0]
		return !ps
	})
	for _, w := range []string{worker(0), relaunched, third} {
		if p := final[w]; p.Status.Phase != corev1.PodSucceeded {
			t.Errorf("worker %s ended %s, want Succeeded", w, p.Status.Phase)
		}
	}
}

// elasticRun is an ElasticJob under test.
type elasticRun struct {
	t   *testing.T
	c   client.Client
	ns  string
	job string
}

// checkTask checks what pod printed: its task in TF_CONFIG, WORKER_NUM
// (workerNum, "None" when unset; "" leaves it unchecked), and the cluster the controller gives a task of
// typ and rank when the job has workers workers: every PS, the chief at
// index 0, and workers 0 to workers-1.
func (e *elasticRun) checkTask(pod string, typ elasticv1alpha1.ReplicaType, rank, workers int, workerNum string) {
	e.t.Helper()
	waitLogMatch(e.t, e.ns, pod, heartbeat)
	m := waitLogMatch(e.t, e.ns, pod, taskLine)
	if want := []string{string(typ), fmt.Sprint(rank)}; m[1] != want[0] || m[2] != want[1] {
		e.t.Errorf("pod %s runs task %s %s, want %s %s", pod, m[1], m[2], want[0], want[1])
	}
	if workerNum != "" && m[3] != workerNum {
		e.t.Errorf("pod %s has WORKER_NUM %s, want %s", pod, m[3], workerNum)
	}
	cluster := elasticjob.SparseClusterSpec{
		PS:     []string{elasticjob.TaskServiceAddr(e.job, elasticv1alpha1.ReplicaTypePS, 0)},
		Chief:  map[int]string{0: elasticjob.TaskServiceAddr(e.job, elasticv1alpha1.ReplicaTypeChief, 0)},
		Worker: map[int]string{},
	}
	for i := range workers {
		cluster.Worker[i] = elasticjob.TaskServiceAddr(e.job, elasticv1alpha1.ReplicaTypeWorker, i)
	}
	want, err := elasticjob.TFConfigJSON(cluster, typ, rank)
	if err != nil {
		e.t.Fatal(err)
	}
	if got := waitLogMatch(e.t, e.ns, pod, tfConfigLine)[1]; got != want {
		e.t.Errorf("pod %s TF_CONFIG\n got %s\nwant %s", pod, got, want)
	}
}

// exec runs the Python code in the pod's container.
func (e *elasticRun) exec(pod, code string) {
	e.t.Helper()
	if out, err := clus.Kubectl(jobContext(e.t), "-n", e.ns, "exec", pod, "--", "python3", "-c", code); err != nil {
		e.t.Fatalf("in pod %s: %v\n%s", pod, err, out)
	}
}

// poll waits until done; it fails the test with the job's pods and their
// logs when it does not come, or when done returns an error.
func (e *elasticRun) poll(what string, done func(context.Context) (bool, error)) {
	e.t.Helper()
	if err := wait.PollUntilContextCancel(jobContext(e.t), 250*time.Millisecond, true, done); err != nil {
		e.t.Fatalf("ElasticJob %s/%s never %s: %v\n%s", e.ns, e.job, what, err, e.describe())
	}
}

// waitPods waits until done says the job's pods, by name, are where the
// test wants them and returns them.
func (e *elasticRun) waitPods(what string, done func(map[string]corev1.Pod) bool) map[string]corev1.Pod {
	e.t.Helper()
	var out map[string]corev1.Pod
	e.poll(what, func(ctx context.Context) (bool, error) {
		pods, err := e.pods(ctx)
		if err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		out = pods
		return done(pods), nil
	})
	return out
}

// waitPhase waits until the job is in phase; a job that fails first fails
// the test.
func (e *elasticRun) waitPhase(phase elasticv1alpha1.JobConditionType) {
	e.t.Helper()
	e.poll("reached phase "+string(phase), func(ctx context.Context) (bool, error) {
		job := &elasticv1alpha1.ElasticJob{}
		if err := e.c.Get(ctx, types.NamespacedName{Namespace: e.ns, Name: e.job}, job); err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		if job.Status.Phase == elasticv1alpha1.JobFailed && phase != elasticv1alpha1.JobFailed {
			return false, fmt.Errorf("the job failed: %+v", job.Status.Conditions)
		}
		return job.Status.Phase == phase, nil
	})
}

// waitPlan waits until the ScalePlan is in phase; a plan that fails first
// fails the test.
func (e *elasticRun) waitPlan(name string, phase elasticv1alpha1.JobConditionType) {
	e.t.Helper()
	e.poll("executed ScalePlan "+name, func(ctx context.Context) (bool, error) {
		plan := &elasticv1alpha1.ScalePlan{}
		if err := e.c.Get(ctx, types.NamespacedName{Namespace: e.ns, Name: name}, plan); err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		if plan.Status.Phase == elasticv1alpha1.JobFailed && phase != elasticv1alpha1.JobFailed {
			return false, fmt.Errorf("ScalePlan %s failed", name)
		}
		return plan.Status.Phase == phase, nil
	})
}

// pods returns the job's pods by name.
func (e *elasticRun) pods(ctx context.Context) (map[string]corev1.Pod, error) {
	sel := labels.SelectorFromSet(labels.Set{elasticv1alpha1.JobNameLabelKey: e.job}).String()
	list, err := kube.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	out := map[string]corev1.Pod{}
	for _, p := range list.Items {
		out[p.Name] = p
	}
	return out, nil
}

// describe returns the job's status and its pods' labels, status and
// logs, for a failure.
func (e *elasticRun) describe() string {
	ctx := context.Background()
	var b strings.Builder
	st, _ := clus.Kubectl(ctx, "-n", e.ns, "get", "elasticjobs.elastic.iml.github.io", e.job, "-o", "jsonpath={.status}")
	fmt.Fprintf(&b, "status: %s\n", st)
	pods, _ := e.pods(ctx)
	for _, name := range slices.Sorted(maps.Keys(pods)) {
		p := pods[name]
		logs, _ := clus.Kubectl(ctx, "-n", e.ns, "logs", name, "--tail=10")
		fmt.Fprintf(&b, "--- pod %s %v %s:\n%s\n", name, p.Labels, podStatus(&p), logs)
	}
	return b.String()
}

// allRunning reports whether each named pod is in pods, Running and Ready.
func allRunning(pods map[string]corev1.Pod, names ...string) bool {
	for _, n := range names {
		p, ok := pods[n]
		if !ok || !running(&p) {
			return false
		}
	}
	return true
}

// untouched checks that each named pod of before is in after, the same pod
// (UID), still Running with its container never restarted.
func untouched(t *testing.T, before, after map[string]corev1.Pod, names ...string) {
	t.Helper()
	for _, n := range names {
		b, a := before[n], after[n]
		switch {
		case a.UID != b.UID:
			t.Errorf("pod %s was replaced (UID %s, then %q)", n, b.UID, a.UID)
		case a.Status.Phase != b.Status.Phase:
			t.Errorf("pod %s went from %s to %s", n, b.Status.Phase, a.Status.Phase)
		case len(a.Status.ContainerStatuses) != 1 || a.Status.ContainerStatuses[0].RestartCount != 0:
			t.Errorf("pod %s container statuses %+v, want one never restarted", n, a.Status.ContainerStatuses)
		}
	}
}

// exitCode is the exit code of the pod's terminated container; -1 when it
// has none.
func exitCode(p corev1.Pod) int32 {
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Terminated != nil {
			return s.State.Terminated.ExitCode
		}
	}
	return -1
}
