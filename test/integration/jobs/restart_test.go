package jobs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

// waitRecreated waits until pod name of the job is a new pod (another UID
// than old) and returns it.
func (e *env) waitRecreated(t *testing.T, old *corev1.Pod) *corev1.Pod {
	t.Helper()
	ctx := testutil.SubtestContext(t)
	var p corev1.Pod
	testutil.Poll(ctx, t, "recreating "+old.Name, func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKeyFromObject(old), &p)
		if err != nil {
			return false, err.Error(), client.IgnoreNotFound(err)
		}
		return p.UID != old.UID && p.DeletionTimestamp == nil, string(p.UID), nil
	})
	return &p
}

// waitBackoff waits until the job's backoffCount is n.
func (e *env) waitBackoff(t *testing.T, job *batchv1beta1.PyTorchTrainingJob, n int32) {
	t.Helper()
	ctx := testutil.SubtestContext(t)
	testutil.Poll(ctx, t, fmt.Sprintf("backoffCount %d", n), func() (bool, string, error) {
		e.get(ctx, t, job)
		return job.Status.BackoffCount == n, fmt.Sprint(job.Status.BackoffCount), nil
	})
}

// testExitCodeTable: under ExitCode, 130, 137, 143 and 138 recreate the pod
// (counted in backoffCount); 1, 2, 126, 127, 128, 139 and 255 fail the job
// at once, the status keeping the container's exit code.
func testExitCodeTable(t *testing.T, e *env) {
	for _, tc := range []struct {
		code    int32
		restart bool
	}{
		{130, true}, {137, true}, {143, true}, {138, true},
		{1, false}, {2, false}, {126, false}, {127, false}, {128, false}, {139, false}, {255, false},
	} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			t.Parallel()
			ctx := testutil.SubtestContext(t)
			ns := e.namespace(t, nil)
			job := pytorchJob(ns, "exit", pytorchReplicas("worker", 1, batchv1beta1.ReplicaRestartExitCode))
			job.Spec.RunPolicy.BackoffLimit = ptr.To[int32](5)
			if err := e.c.Create(ctx, job); err != nil {
				t.Fatal(err)
			}
			pod := e.waitPods(ctx, t, ns, "exit", "exit-worker-0")["exit-worker-0"]
			e.setPod(ctx, t, pod, corev1.PodRunning, nil)
			e.setPod(ctx, t, pod, corev1.PodFailed, map[string]int32{"pytorch": tc.code})
			if tc.restart {
				e.waitRecreated(t, pod)
				e.waitBackoff(t, job, 1)
				e.waitEvent(ctx, t, ns, "exit", "Restarting", fmt.Sprintf("Recreating replica exit-worker-0, which exited with code %d", tc.code))
				return
			}
			s := e.waitPhase(ctx, t, job, batchv1beta1.JobFailed)
			c := condition(t, s, batchv1beta1.JobFailedCond)
			msg := fmt.Sprintf("The job failed: replica exit-worker-0 exited with code %d.", tc.code)
			if c.Message != msg || c.Reason != "Failed" {
				t.Errorf("Failed condition %+v, want message %q", c, msg)
			}
			if job.Status.BackoffCount != 0 {
				t.Errorf("backoffCount %d, want 0", job.Status.BackoffCount)
			}
			var got []batchv1beta1.ContainerStatus
			if len(s.Tasks) == 1 && len(s.Tasks[0].Replicas) == 1 {
				got = s.Tasks[0].Replicas[0].Containers
			}
			if want := []batchv1beta1.ContainerStatus{{Name: "pytorch", State: "Terminated", ExitCode: tc.code}}; !cmp.Equal(got, want) {
				t.Errorf("containers in the status %+v, want %+v (tasks %+v)", got, want, s.Tasks)
			}
			e.waitEvent(ctx, t, ns, "exit", "Failed", msg)
		})
	}
}

// testBackoffLimitShared: every recreation, of any replica, counts against
// one backoffLimit; once it is spent the next failure fails the job.
func testBackoffLimitShared(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	job := pytorchJob(ns, "backoff",
		pytorchReplicas("master", 1, batchv1beta1.ReplicaRestartOnFailure),
		pytorchReplicas("worker", 1, batchv1beta1.ReplicaRestartOnFailure))
	job.Spec.RunPolicy.BackoffLimit = ptr.To[int32](2)
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "backoff", "backoff-master-0", "backoff-worker-0")
	e.runAll(ctx, t, ns, "backoff")
	e.setPod(ctx, t, pods["backoff-worker-0"], corev1.PodFailed, map[string]int32{"pytorch": 1})
	worker := e.waitRecreated(t, pods["backoff-worker-0"])
	e.waitBackoff(t, job, 1)
	e.setPod(ctx, t, pods["backoff-master-0"], corev1.PodFailed, map[string]int32{"pytorch": 3})
	e.waitRecreated(t, pods["backoff-master-0"])
	e.waitBackoff(t, job, 2)
	restarts := map[string]int32{}
	for _, tk := range job.Status.Tasks {
		restarts[tk.Type] = tk.RestartCount
	}
	if restarts["master"] != 1 || restarts["worker"] != 1 {
		t.Errorf("restartCount per type %v, want master 1 worker 1", restarts)
	}
	e.setPod(ctx, t, worker, corev1.PodFailed, map[string]int32{"pytorch": 1})
	s := e.waitPhase(ctx, t, job, batchv1beta1.JobFailed)
	c := condition(t, s, batchv1beta1.JobFailedCond)
	if c.Reason != "BackoffLimitExceeded" || !strings.Contains(c.Message, "backoff-worker-0 exited with code 1 and no restarts are left") {
		t.Errorf("Failed condition %+v", c)
	}
	if job.Status.BackoffCount != 2 {
		t.Errorf("backoffCount %d, want 2", job.Status.BackoffCount)
	}
}

// testPolicies: Never fails the job with the replica; Always recreates a
// replica that succeeded; OnFailure does not.
func testPolicies(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)

	never := pytorchJob(ns, "never", pytorchReplicas("master", 1, batchv1beta1.ReplicaRestartNever), pytorchReplicas("worker", 1, batchv1beta1.ReplicaRestartNever))
	always := pytorchJob(ns, "always", pytorchReplicas("master", 1, batchv1beta1.ReplicaRestartOnFailure), pytorchReplicas("worker", 1, batchv1beta1.ReplicaRestartAlways))
	for _, j := range []client.Object{never, always} {
		if err := e.c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	np := e.waitPods(ctx, t, ns, "never", "never-master-0", "never-worker-0")
	e.setPod(ctx, t, np["never-worker-0"], corev1.PodFailed, map[string]int32{"pytorch": 137})
	s := e.waitPhase(ctx, t, never, batchv1beta1.JobFailed)
	if c := condition(t, s, batchv1beta1.JobFailedCond); c.Message != "The job failed: replica never-worker-0 exited with code 137." {
		t.Errorf("Never: Failed condition %+v", c)
	}

	ap := e.waitPods(ctx, t, ns, "always", "always-master-0", "always-worker-0")
	e.runAll(ctx, t, ns, "always")
	e.setPod(ctx, t, ap["always-worker-0"], corev1.PodSucceeded, nil)
	e.waitRecreated(t, ap["always-worker-0"])
	e.waitBackoff(t, always, 1)
	e.setPod(ctx, t, ap["always-master-0"], corev1.PodSucceeded, nil)
	e.waitPhase(ctx, t, always, batchv1beta1.JobSucceeded)
}

// testGenericRestartLimit: a GenericJob type's restartPolicy limit bounds
// the recreations of all its replicas together; a replica failing past it
// fails for good.
func testGenericRestartLimit(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	gj := &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "limit"},
		Spec: batchv1beta1.GenericJobSpec{ReplicaSpecs: []batchv1beta1.ReplicaSpec{{
			Type: "worker", Replicas: ptr.To[int32](2),
			RestartPolicy: &batchv1beta1.RestartPolicy{Policy: batchv1beta1.RestartPolicyOnFailure, Limit: 1},
			Template:      template(container("main", "sleep", "1")),
		}}},
	}
	if err := e.c.Create(ctx, gj); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "limit", "limit-worker-0", "limit-worker-1")
	e.runAll(ctx, t, ns, "limit")
	e.setPod(ctx, t, pods["limit-worker-0"], corev1.PodFailed, map[string]int32{"main": 1})
	e.waitRecreated(t, pods["limit-worker-0"])
	testutil.Poll(ctx, t, "restartCount 1", func() (bool, string, error) {
		e.get(ctx, t, gj)
		return len(gj.Status.Tasks) == 1 && gj.Status.Tasks[0].RestartCount == 1, fmt.Sprintf("%+v", gj.Status.Tasks), nil
	})
	e.setPod(ctx, t, pods["limit-worker-1"], corev1.PodFailed, map[string]int32{"main": 2})
	s := e.waitPhase(ctx, t, gj, batchv1beta1.JobFailed)
	if c := condition(t, s, batchv1beta1.JobFailedCond); c.Message != "The job failed: replica limit-worker-1 exited with code 2 and no restarts are left." {
		t.Errorf("Failed condition %+v", c)
	}
	if s.Tasks[0].RestartCount != 1 {
		t.Errorf("restartCount %d, want 1", s.Tasks[0].RestartCount)
	}
}

// testDisruptions: a pod evicted, preempted or deleted by someone else is
// recreated even under Never, and the recreation counts.
func testDisruptions(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	job := pytorchJob(ns, "disrupt", pytorchReplicas("worker", 1, batchv1beta1.ReplicaRestartNever))
	job.Spec.RunPolicy.BackoffLimit = ptr.To[int32](5)
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pod := e.waitPods(ctx, t, ns, "disrupt", "disrupt-worker-0")["disrupt-worker-0"]
	e.setPod(ctx, t, pod, corev1.PodRunning, nil)

	// Evicted by the kubelet.
	e.get(ctx, t, pod)
	pod.Status.Phase, pod.Status.Reason, pod.Status.Message = corev1.PodFailed, "Evicted", "The node was low on resource: memory."
	if err := e.c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod = e.waitRecreated(t, pod)
	e.waitBackoff(t, job, 1)

	// Preempted: the scheduler marks it a disruption target.
	e.setPod(ctx, t, pod, corev1.PodRunning, nil)
	e.get(ctx, t, pod)
	pod.Status.Phase = corev1.PodFailed
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler", LastTransitionTime: metav1.Now(),
	})
	if err := e.c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod = e.waitRecreated(t, pod)
	e.waitBackoff(t, job, 2)

	// Deleted by someone else (the node went away, an admin), once the
	// status records the pod: one gone before that is only created again.
	e.setPod(ctx, t, pod, corev1.PodRunning, nil)
	testutil.Poll(ctx, t, "the status records "+pod.Name+" running", func() (bool, string, error) {
		e.get(ctx, t, job)
		return replicaPhase(job, pod.Name) == "Running", replicaPhase(job, pod.Name), nil
	})
	if err := e.c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	e.waitRecreated(t, pod)
	e.waitBackoff(t, job, 3)
	if job.Status.Phase == batchv1beta1.JobFailed {
		t.Errorf("job failed: %+v", job.Status.Conditions)
	}
}

// testNodeGone: a pod whose node is deleted is removed by the real pod
// garbage collector, and the job recreates it, counting the recreation.
func testNodeGone(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"}}
	if err := e.c.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	job := pytorchJob(ns, "lost", pytorchReplicas("worker", 1, batchv1beta1.ReplicaRestartNever))
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pod := e.waitPods(ctx, t, ns, "lost", "lost-worker-0")["lost-worker-0"]
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod.Name},
		Target: corev1.ObjectReference{Kind: "Node", Name: node.Name}}
	if err := e.c.SubResource("binding").Create(ctx, pod, binding); err != nil {
		t.Fatal(err)
	}
	e.setPod(ctx, t, pod, corev1.PodRunning, nil)
	if err := e.c.Delete(ctx, node); err != nil {
		t.Fatal(err)
	}
	e.waitRecreated(t, pod)
	e.waitBackoff(t, job, 1)
}

// testInterruptedRestart: a controller that stopped between recording a
// restart in the status (the replica's pod marked Deleted, counted in
// backoffCount) and deleting the pod finishes the restart when it comes
// back, without counting it twice. The status is written here as such a
// controller would have left it.
func testInterruptedRestart(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	job := pytorchJob(ns, "interrupted", pytorchReplicas("worker", 1, batchv1beta1.ReplicaRestartOnFailure))
	job.Spec.RunPolicy.BackoffLimit = ptr.To[int32](3)
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pod := e.waitPods(ctx, t, ns, "interrupted", "interrupted-worker-0")["interrupted-worker-0"]
	e.setPod(ctx, t, pod, corev1.PodRunning, nil)
	testutil.Poll(ctx, t, "the replica running in the status", func() (bool, string, error) {
		e.get(ctx, t, job)
		return replicaPhase(job, pod.Name) == "Running", replicaPhase(job, pod.Name), nil
	})
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		e.get(ctx, t, job)
		for i := range job.Status.Tasks {
			for j := range job.Status.Tasks[i].Replicas {
				if rs := &job.Status.Tasks[i].Replicas[j]; rs.Name == pod.Name {
					rs.Phase = "Deleted"
					job.Status.Tasks[i].RestartCount++
				}
			}
		}
		job.Status.BackoffCount++
		return e.c.Status().Update(ctx, job)
	})
	if err != nil {
		t.Fatal(err)
	}
	e.waitRecreated(t, pod)
	e.get(ctx, t, job)
	if job.Status.BackoffCount != 1 {
		t.Errorf("backoffCount %d, want 1: the interrupted restart counts once", job.Status.BackoffCount)
	}
}

// replicaPhase is the phase job's status records for the replica whose pod
// is name.
func replicaPhase(job *batchv1beta1.PyTorchTrainingJob, name string) string {
	for _, tk := range job.Status.Tasks {
		for _, rs := range tk.Replicas {
			if rs.Name == name {
				return rs.Phase
			}
		}
	}
	return ""
}
