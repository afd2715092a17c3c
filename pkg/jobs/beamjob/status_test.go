package beamjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

func finishedJob(typ batchv1.JobConditionType) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "wc-batchjob-abcde"}}
	if typ != "" {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionFalse}, {Type: typ, Status: corev1.ConditionTrue}}
	}
	return j
}

func TestNextPhase(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  *batchv1.Job
		want batchv1beta1.BeamJobPhase
	}{
		{"no submitter", nil, batchv1beta1.BeamJobInitializing},
		{"submitter running", finishedJob(""), batchv1beta1.BeamJobRunning},
		{"submitter complete", finishedJob(batchv1.JobComplete), batchv1beta1.BeamJobSucceeded},
		{"submitter failed", finishedJob(batchv1.JobFailed), batchv1beta1.BeamJobFailed},
	} {
		if got := nextPhase(tc.job); got != tc.want {
			t.Errorf("%s: phase %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestClusterCondition(t *testing.T) {
	for _, tc := range []struct {
		exists bool
		state  string
		status corev1.ConditionStatus
		reason string
	}{
		{false, "", corev1.ConditionFalse, "ClusterNotFound"},
		{true, "", corev1.ConditionFalse, "ClusterCreating"},
		{true, "Creating", corev1.ConditionFalse, "ClusterCreating"},
		{true, "Running", corev1.ConditionTrue, "ClusterRunning"},
		{true, "Reconciling", corev1.ConditionFalse, "ClusterReconciling"},
	} {
		c := clusterCondition(tc.exists, tc.state)
		if c.Type != batchv1beta1.BeamClusterRunning || c.Status != tc.status || c.Reason != tc.reason || c.Message == "" {
			t.Errorf("exists %t state %q: %+v", tc.exists, tc.state, c)
		}
	}
}

func TestJobCondition(t *testing.T) {
	pod := func(name string, phase corev1.PodPhase) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: phase}}
	}
	for _, tc := range []struct {
		name   string
		job    *batchv1.Job
		pods   []corev1.Pod
		status corev1.ConditionStatus
		reason string
	}{
		{"no job", nil, nil, corev1.ConditionFalse, "JobNotCreated"},
		{"pending", finishedJob(""), []corev1.Pod{pod("a", corev1.PodPending)}, corev1.ConditionFalse, "PodNotRunning"},
		{"retried", finishedJob(""), []corev1.Pod{pod("a", corev1.PodFailed), pod("b", corev1.PodRunning)}, corev1.ConditionTrue, "PodRunning"},
		{"succeeded", finishedJob(batchv1.JobComplete), []corev1.Pod{pod("a", corev1.PodSucceeded)}, corev1.ConditionFalse, "JobSucceeded"},
		{"failed", finishedJob(batchv1.JobFailed), []corev1.Pod{pod("a", corev1.PodFailed)}, corev1.ConditionFalse, "JobFailed"},
	} {
		c := jobCondition(tc.job, tc.pods)
		if c.Type != batchv1beta1.BeamJobRunningCond || c.Status != tc.status || c.Reason != tc.reason {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
}

func TestSetConditionKeepsTransitionTime(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2021, 1, 18, 2, 36, 9, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	s := &batchv1beta1.BeamJobStatus{}
	setCondition(s, clusterCondition(true, "Creating"), t0)
	setCondition(s, clusterCondition(true, "Reconciling"), t1)
	if c := s.Conditions[0]; len(s.Conditions) != 1 || !c.LastTransitionTime.Equal(&t0) || c.Reason != "ClusterReconciling" {
		t.Errorf("same status: %+v", s.Conditions)
	}
	setCondition(s, clusterCondition(true, "Running"), t1)
	if c := s.Conditions[0]; !c.LastTransitionTime.Equal(&t1) || c.Status != corev1.ConditionTrue {
		t.Errorf("new status: %+v", c)
	}
}

func TestPodStatusesOldestFirst(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2021, 1, 18, 2, 36, 9, 0, time.UTC))
	pods := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "2", CreationTimestamp: metav1.NewTime(t0.Add(time.Second))}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "1", CreationTimestamp: t0}, Status: corev1.PodStatus{Phase: corev1.PodFailed}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c", UID: "3", CreationTimestamp: metav1.NewTime(t0.Add(time.Second))}},
	}
	want := []batchv1beta1.PodStatus{
		{Phase: corev1.PodFailed, Reference: batchv1beta1.PodReference{Name: "a", UID: "1"}},
		{Phase: corev1.PodRunning, Reference: batchv1beta1.PodReference{Name: "b", UID: "2"}},
		{Phase: corev1.PodPending, Reference: batchv1beta1.PodReference{Name: "c", UID: "3"}},
	}
	if diff := cmp.Diff(want, podStatuses(pods)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
