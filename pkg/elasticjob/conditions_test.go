package elasticjob

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

// condSummary is a condition without times.
type condSummary struct {
	Type   elasticv1alpha1.JobConditionType
	Status corev1.ConditionStatus
	Reason string
}

func summarize(job *elasticv1alpha1.ElasticJob) []condSummary {
	var out []condSummary
	for _, c := range job.Status.Conditions {
		out = append(out, condSummary{c.Type, c.Status, c.Reason})
	}
	return out
}

func TestConditions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		steps     func(j *elasticv1alpha1.ElasticJob)
		wantPhase elasticv1alpha1.JobConditionType
		want      []condSummary
	}{{
		name: "running after pending turns pending false",
		steps: func(j *elasticv1alpha1.ElasticJob) {
			setCondition(j, elasticv1alpha1.JobCreated, ReasonJobCreated, "")
			setCondition(j, elasticv1alpha1.JobPending, ReasonJobPending, "")
			setCondition(j, elasticv1alpha1.JobRunning, ReasonJobRunning, "")
		},
		wantPhase: elasticv1alpha1.JobRunning,
		want: []condSummary{
			{elasticv1alpha1.JobCreated, corev1.ConditionTrue, ReasonJobCreated},
			{elasticv1alpha1.JobPending, corev1.ConditionFalse, ReasonJobPending},
			{elasticv1alpha1.JobRunning, corev1.ConditionTrue, ReasonJobRunning},
		},
	}, {
		name: "scaling and back to running",
		steps: func(j *elasticv1alpha1.ElasticJob) {
			setCondition(j, elasticv1alpha1.JobRunning, ReasonJobRunning, "")
			setCondition(j, elasticv1alpha1.JobScaling, ReasonJobScaling, "")
			setCondition(j, elasticv1alpha1.JobRunning, ReasonJobRunning, "")
		},
		wantPhase: elasticv1alpha1.JobRunning,
		want: []condSummary{
			{elasticv1alpha1.JobRunning, corev1.ConditionTrue, ReasonJobRunning},
			{elasticv1alpha1.JobScaling, corev1.ConditionFalse, ReasonJobScaling},
		},
	}, {
		name: "finished jobs do not change",
		steps: func(j *elasticv1alpha1.ElasticJob) {
			setCondition(j, elasticv1alpha1.JobRunning, ReasonJobRunning, "")
			finish(j, elasticv1alpha1.JobFailed, "Evicted", "")
			finish(j, elasticv1alpha1.JobSucceeded, ReasonJobSucceeded, "")
			setCondition(j, elasticv1alpha1.JobRunning, ReasonJobRunning, "")
		},
		wantPhase: elasticv1alpha1.JobFailed,
		want: []condSummary{
			{elasticv1alpha1.JobRunning, corev1.ConditionFalse, ReasonJobRunning},
			{elasticv1alpha1.JobFailed, corev1.ConditionTrue, "Evicted"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			j := &elasticv1alpha1.ElasticJob{}
			tc.steps(j)
			if j.Status.Phase != tc.wantPhase {
				t.Errorf("phase %q, want %q", j.Status.Phase, tc.wantPhase)
			}
			if diff := cmp.Diff(tc.want, summarize(j)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFinishSetsCompletionTimeOnce(t *testing.T) {
	j := &elasticv1alpha1.ElasticJob{}
	finish(j, elasticv1alpha1.JobSucceeded, ReasonJobSucceeded, "")
	if j.Status.CompletionTime == nil {
		t.Fatal("no completion time")
	}
}

func TestSetReplicaStatusKeepsInitial(t *testing.T) {
	j := &elasticv1alpha1.ElasticJob{}
	j.Name = "j"
	j.Status.ReplicaStatuses = map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaStatus{"worker": {Initial: 3, Active: 9}}
	pods := []corev1.Pod{
		{Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		{Status: corev1.PodStatus{Phase: corev1.PodPending}},
		{Status: corev1.PodStatus{Phase: corev1.PodFailed}},
		{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
		{Status: corev1.PodStatus{Phase: corev1.PodRunning}},
	}
	setReplicaStatus(j, "worker", pods)
	got := *j.Status.ReplicaStatuses["worker"]
	got.LabelSelector = nil
	want := elasticv1alpha1.ReplicaStatus{Initial: 3, Active: 2, Pending: 1, Failed: 1, Succeeded: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replica status (-want +got):\n%s", diff)
	}
}
