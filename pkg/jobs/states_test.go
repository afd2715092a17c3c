package jobs

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// testJob returns a training-like job "j" with the replica types given as
// type, count pairs, all under policy, sharing a backoff limit.
func testJob(policy batchv1beta1.ReplicaRestartPolicy, limit *int32, types ...any) *Job {
	gj := &batchv1beta1.PyTorchTrainingJob{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", UID: "job-uid"}}
	job := &Job{Object: gj, Status: &gj.Status.JobStatus, BackoffCount: &gj.Status.BackoffCount, BackoffLimit: limit}
	for i := 0; i < len(types); i += 2 {
		job.Replicas = append(job.Replicas, Replica{
			Type: types[i].(string), Replicas: int32(types[i+1].(int)), Restart: Restart{Policy: policy},
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}},
		})
	}
	return job
}

func pod(name string, uid types.UID, phase corev1.PodPhase, code int32) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid}, Status: corev1.PodStatus{Phase: phase}}
	if phase == corev1.PodFailed {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}}
	}
	return p
}

func observe(pods []*corev1.Pod, previous []batchv1beta1.ReplicaStatus, deleted ...types.UID) observed {
	o := observed{pods: map[string]*corev1.Pod{}, previous: map[string]batchv1beta1.ReplicaStatus{}, deleted: func(u types.UID) bool {
		for _, d := range deleted {
			if d == u {
				return true
			}
		}
		return false
	}}
	for _, p := range pods {
		o.pods[p.Name] = p
	}
	for _, r := range previous {
		o.previous[r.Name] = r
	}
	return o
}

func stateOf(s *States, name string) *ReplicaState { return s.byName[name] }

func TestPlanSharedBudget(t *testing.T) {
	job := testJob(batchv1beta1.ReplicaRestartOnFailure, ptr.To[int32](2), "master", 1, "worker", 3)
	*job.BackoffCount = 1
	obs := observe([]*corev1.Pod{
		pod("j-master-0", "m0", corev1.PodRunning, 0),
		pod("j-worker-0", "w0", corev1.PodFailed, 1),
		pod("j-worker-1", "w1", corev1.PodFailed, 1),
	}, nil)
	b := newBudget(job)
	s := plan(job, obs, b, false)
	if st := stateOf(s, "j-worker-0"); st.State != Restarting || !st.restart {
		t.Errorf("worker 0: %+v, want restarting", st)
	}
	if st := stateOf(s, "j-worker-1"); st.State != Failed || !st.Exhausted || st.Detail != "exited with code 1 and no restarts are left" {
		t.Errorf("worker 1: %+v, want failed for good", st)
	}
	if st := stateOf(s, "j-worker-2"); st.State != Missing {
		t.Errorf("worker 2: %+v, want missing", st)
	}
	if b.total != 2 || b.perType["worker"] != 1 {
		t.Errorf("budget total %d per type %v", b.total, b.perType)
	}
	if o := LeaderOutcome(job, s, "master", 0); !o.Done || o.Succeeded || o.Reason != ReasonBackoffLimit {
		t.Errorf("outcome %+v", o)
	}
}

func TestPlanTypeLimit(t *testing.T) {
	job := testJob(batchv1beta1.ReplicaRestartOnFailure, nil, "worker", 2)
	job.Replicas[0].Restart.Limit = ptr.To[int32](1)
	job.Status.Tasks = []batchv1beta1.Tasks{{Type: "worker", RestartCount: 1}}
	s := plan(job, observe([]*corev1.Pod{pod("j-worker-0", "w0", corev1.PodFailed, 1)}, nil), newBudget(job), false)
	if st := stateOf(s, "j-worker-0"); st.State != Failed || !st.Exhausted {
		t.Errorf("worker 0: %+v, want failed: the type's limit is spent", st)
	}
}

func TestPlanLostPods(t *testing.T) {
	job := testJob(batchv1beta1.ReplicaRestartNever, ptr.To[int32](3), "worker", 4)
	previous := []batchv1beta1.ReplicaStatus{
		{Name: "j-worker-0", UID: "w0", Phase: "Running"}, // gone: lost
		{Name: "j-worker-1", UID: "w1", Phase: "Deleted"}, // deleted by the engine
		{Name: "j-worker-2", UID: "w2", Phase: "Running"}, // deleted by the engine, status not yet written
		{Name: "j-worker-3", UID: "w3", Phase: "Running"}, // being deleted by someone else
	}
	terminating := pod("j-worker-3", "w3", corev1.PodRunning, 0)
	terminating.DeletionTimestamp = ptr.To(metav1.Now())
	b := newBudget(job)
	s := plan(job, observe([]*corev1.Pod{terminating}, previous, "w2"), b, false)
	for name, want := range map[string]State{"j-worker-0": Restarting, "j-worker-1": Missing, "j-worker-2": Missing, "j-worker-3": Restarting} {
		if st := stateOf(s, name); st.State != want {
			t.Errorf("%s: %+v, want %v", name, st, want)
		}
	}
	if !stateOf(s, "j-worker-0").restart || stateOf(s, "j-worker-3").restart || b.total != 1 {
		t.Errorf("only the lost pod counts: total %d", b.total)
	}
	tasks := buildTasks(job, s, b, nil, observe([]*corev1.Pod{terminating}, previous, "w2"))
	if e := tasks[0].Replicas[0]; e.Name != "j-worker-0" || e.Phase != PhaseDeleted || e.UID != "w0" {
		t.Errorf("lost replica recorded as %+v, want Deleted so that it counts once", e)
	}
}

func TestPlanFinished(t *testing.T) {
	job := testJob(batchv1beta1.ReplicaRestartAlways, ptr.To[int32](3), "worker", 1)
	s := plan(job, observe([]*corev1.Pod{pod("j-worker-0", "w0", corev1.PodSucceeded, 0)}, nil), newBudget(job), true)
	if st := stateOf(s, "j-worker-0"); st.State != Succeeded || st.restart {
		t.Errorf("finished job: %+v, want succeeded, no restart", st)
	}
}

func TestAggregate(t *testing.T) {
	tasks := []batchv1beta1.Tasks{{Replicas: []batchv1beta1.ReplicaStatus{
		{Phase: PhaseCreating}, {Phase: "Pending"}, {Phase: "Running"}, {Phase: "Running"},
		{Phase: "Succeeded"}, {Phase: "Failed"}, {Phase: "Unknown"}, {Phase: PhaseDeleted},
	}}}
	want := batchv1beta1.Aggregate{Creating: 1, Pending: 1, Running: 2, Succeeded: 1, Failed: 1, Unknown: 1, Deleted: 1}
	if got := aggregate(tasks); got != want {
		t.Errorf("aggregate = %+v, want %+v", got, want)
	}
}

func TestSetConditionKeepsTransitionTime(t *testing.T) {
	s := &batchv1beta1.JobStatus{}
	t0, t1 := metav1.Unix(100, 0), metav1.Unix(200, 0)
	setCondition(s, batchv1beta1.JobRunningCond, corev1.ConditionTrue, "-", "a", t0)
	setCondition(s, batchv1beta1.JobRunningCond, corev1.ConditionTrue, "-", "b", t1)
	if c := s.Conditions[0]; c.LastTransitionTime != t0 || c.Message != "b" {
		t.Errorf("same status: %+v", c)
	}
	setCondition(s, batchv1beta1.JobRunningCond, corev1.ConditionFalse, "x", "c", t1)
	if c := s.Conditions[0]; c.LastTransitionTime != t1 || len(s.Conditions) != 1 {
		t.Errorf("new status: %+v", s.Conditions)
	}
}

func TestProgressPhases(t *testing.T) {
	job := testJob(batchv1beta1.ReplicaRestartOnFailure, ptr.To[int32](3), "master", 1, "worker", 1)
	now := metav1.Unix(100, 0)
	running := []*corev1.Pod{pod("j-master-0", "m", corev1.PodRunning, 0), pod("j-worker-0", "w", corev1.PodPending, 0)}
	progress(job.Status, job, plan(job, observe(running, nil), newBudget(job), false), now)
	if job.Status.Phase != batchv1beta1.JobPending || !isTrue(job.Status, batchv1beta1.JobInitialized) || isTrue(job.Status, batchv1beta1.JobRunningCond) {
		t.Errorf("one of two running: phase %s conditions %+v", job.Status.Phase, job.Status.Conditions)
	}
	running[1].Status.Phase = corev1.PodRunning
	progress(job.Status, job, plan(job, observe(running, nil), newBudget(job), false), now)
	if job.Status.Phase != batchv1beta1.JobRunning || !isTrue(job.Status, batchv1beta1.JobRunningCond) || isTrue(job.Status, batchv1beta1.JobReplicaFailure) {
		t.Errorf("all running: phase %s conditions %+v", job.Status.Phase, job.Status.Conditions)
	}
	failed := []*corev1.Pod{running[0], pod("j-worker-0", "w", corev1.PodFailed, 137)}
	progress(job.Status, job, plan(job, observe(failed, nil), newBudget(job), false), now)
	c := Condition(job.Status, batchv1beta1.JobReplicaFailure)
	if job.Status.Phase != batchv1beta1.JobRunning || c.Status != corev1.ConditionTrue || c.Message != "Replica j-worker-0 exited with code 137." {
		t.Errorf("restarting: phase %s ReplicaFailure %+v", job.Status.Phase, c)
	}
}
