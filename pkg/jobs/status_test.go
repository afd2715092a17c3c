package jobs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// maxStatusBytes is well below the API server's object size limit (about
// 1.5 MiB), which also holds the job's spec and metadata.
const maxStatusBytes = 512 << 10

// runningJob returns a job named name (62 characters: its pod names are
// about as long as a DNS label allows) with the replica types given as
// type, count pairs, and a Running pod with two containers for each
// replica.
func runningJob(t *testing.T, types ...any) (*Job, []*corev1.Pod) {
	t.Helper()
	job := testJob(batchv1beta1.ReplicaRestartOnFailure, nil, types...)
	job.Object.SetName(strings.Repeat("j", 50))
	var pods []*corev1.Pod
	for _, r := range job.Replicas {
		for rank := int32(0); rank < r.Replicas; rank++ {
			p := pod(r.PodName(job.Object.GetName(), rank), testUID(r.Type, rank), corev1.PodRunning, 0)
			p.Spec.NodeName = "node"
			for _, c := range []string{"main", "sidecar"} {
				p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
					Name: c, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
			}
			pods = append(pods, p)
		}
	}
	return job, pods
}

// testUID returns a UID as long as the API server's for replica typ rank.
func testUID(typ string, rank int32) types.UID {
	return types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012d", len(typ), rank))
}

// statusOf builds the tasks and aggregate of job as a reconcile does and
// returns the status and its size as JSON.
func statusOf(t *testing.T, job *Job, pods []*corev1.Pod) (*batchv1beta1.JobStatus, int) {
	t.Helper()
	obs := observe(pods, nil)
	b := newBudget(job)
	states := plan(job, obs, b, false)
	job.Status.Tasks = buildTasks(job, states, b, nil, obs)
	job.Status.Aggregate = aggregate(job.Status.Tasks)
	data, err := json.Marshal(job.Status)
	if err != nil {
		t.Fatal(err)
	}
	return job.Status, len(data)
}

// TestStatusSizeBounded: the status of a job at MaxJobPods, in one large
// type or spread over the most types a job may have, stays far below the
// object size limit; the large types are counted by phase.
func TestStatusSizeBounded(t *testing.T) {
	job, pods := runningJob(t, "master", 1, "worker", MaxJobPods-1)
	s, size := statusOf(t, job, pods)
	if size > maxStatusBytes {
		t.Errorf("status of %d pods in one type: %d bytes, want at most %d", MaxJobPods, size, maxStatusBytes)
	}
	if len(s.Tasks) != 2 || len(s.Tasks[0].Replicas) != 1 || s.Tasks[0].Aggregate != nil {
		t.Fatalf("tasks %+v, want the master listed", s.Tasks[0])
	}
	if w := s.Tasks[1]; len(w.Replicas) != 0 || w.Aggregate == nil || w.Aggregate.Running != MaxJobPods-1 {
		t.Errorf("worker task lists %d replicas, aggregate %+v; want %d counted Running", len(w.Replicas), w.Aggregate, MaxJobPods-1)
	}
	if s.Aggregate.Running != MaxJobPods {
		t.Errorf("aggregate %+v, want %d Running", s.Aggregate, MaxJobPods)
	}

	// 32 types (the API's most), each just small enough to be listed.
	var spread []any
	for i := 0; i < 32; i++ {
		spread = append(spread, fmt.Sprintf("t%d", i), ListedReplicas)
	}
	job, pods = runningJob(t, spread...)
	if _, size := statusOf(t, job, pods); size > maxStatusBytes {
		t.Errorf("status of 32 types of %d replicas: %d bytes, want at most %d", ListedReplicas, size, maxStatusBytes)
	}
}

// TestStatusListsSmallTypes: a type of ListedReplicas replicas is listed
// one by one; one more, and it is counted by phase, Deleted included.
func TestStatusListsSmallTypes(t *testing.T) {
	job, pods := runningJob(t, "small", ListedReplicas, "large", ListedReplicas+1)
	pods[len(pods)-1].Status.Phase = corev1.PodPending
	obs := observe(pods, nil)
	b := newBudget(job)
	states := plan(job, obs, b, false)
	tasks := buildTasks(job, states, b, map[string]bool{pods[len(pods)-2].Name: true}, obs)
	if len(tasks[0].Replicas) != ListedReplicas || tasks[0].Aggregate != nil {
		t.Errorf("small type: %d entries, aggregate %+v", len(tasks[0].Replicas), tasks[0].Aggregate)
	}
	want := batchv1beta1.Aggregate{Running: ListedReplicas - 1, Pending: 1, Deleted: 1}
	if got := tasks[1].Aggregate; len(tasks[1].Replicas) != 0 || got == nil || *got != want {
		t.Errorf("large type: %d entries, aggregate %+v, want %+v", len(tasks[1].Replicas), got, want)
	}
	if a := aggregate(tasks); a.Running != 2*ListedReplicas-1 || a.Pending != 1 || a.Deleted != 1 {
		t.Errorf("job aggregate %+v", a)
	}
}
