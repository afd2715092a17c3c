package ascendjob

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	mindxdlv1 "github.com/accelstack/accelstack/api/mindxdl/v1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// The reasons of the Kubeflow-shaped conditions.
const (
	ReasonJobCreated    = "JobCreated"
	ReasonJobRunning    = "JobRunning"
	ReasonJobRestarting = "JobRestarting"
	ReasonJobSucceeded  = "JobSucceeded"
	ReasonJobFailed     = "JobFailed"
	ReasonJobValidFail  = "JobValidFailed"
)

// Owns lists no type: the leader's Service is among the Services the engine
// watches already.
func (Kind) Owns() []client.Object { return nil }

// ReconcileDependents creates the leader's Service of a job that runs, and
// sets the Kubeflow-shaped conditions from the engine's, with an event per
// condition set.
func (Kind) ReconcileDependents(ctx context.Context, env *jobs.Env, job *jobs.Job) error {
	aj := job.Object.(*mindxdlv1.AscendJob)
	if !jobs.Finished(job.Status) {
		if err := ensureLeader(ctx, env, aj); err != nil {
			return err
		}
	}
	now := metav1.Now().Rfc3339Copy()
	for _, c := range syncConditions(aj, now) {
		typ, reason := corev1.EventTypeNormal, c.Reason
		if c.Type == mindxdlv1.JobFailed {
			typ = corev1.EventTypeWarning
			if ps := check(aj); c.Reason == ReasonJobValidFail && len(ps) > 0 {
				reason = ps[0].reason
			}
		}
		env.Recorder.Eventf(aj, nil, typ, reason, "Reconcile", "%s", c.Message)
	}
	return nil
}

// ReportStatus copies the start and completion times and counts each
// type's pods.
func (Kind) ReportStatus(job *jobs.Job, pods []*corev1.Pod) {
	aj := job.Object.(*mindxdlv1.AscendJob)
	aj.Status.StartTime = job.Status.StartTime
	aj.Status.CompletionTime = job.Status.CompletionTime
	byType := map[string]*mindxdlv1.ReplicaStatus{}
	statuses := map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaStatus{}
	for _, s := range specs(aj) {
		if s.spec == nil {
			continue
		}
		rs := &mindxdlv1.ReplicaStatus{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
			JobNameLabel: aj.Name, ReplicaTypeLabel: engineType(s.typ)}}}
		statuses[s.typ] = rs
		byType[engineType(s.typ)] = rs
	}
	for _, p := range pods {
		rs := byType[p.Labels[jobs.ReplicaTypeLabel]]
		if rs == nil || p.DeletionTimestamp != nil {
			continue
		}
		switch p.Status.Phase {
		case corev1.PodSucceeded:
			rs.Succeeded++
		case corev1.PodFailed:
			rs.Failed++
		default:
			rs.Active++
		}
	}
	aj.Status.ReplicaStatuses = statuses
}

// syncConditions sets the job's Kubeflow-shaped conditions from the
// engine's and returns those it set anew.
func syncConditions(aj *mindxdlv1.AscendJob, now metav1.Time) []mindxdlv1.JobCondition {
	d := &aj.Status.Detail.JobStatus
	ref := aj.Namespace + "/" + aj.Name
	var set []mindxdlv1.JobCondition
	apply := func(typ mindxdlv1.JobConditionType, reason, message string) {
		if c, changed := setCondition(&aj.Status.Conditions, typ, reason, message, now); changed {
			set = append(set, c)
		}
	}
	apply(mindxdlv1.JobCreated, ReasonJobCreated, fmt.Sprintf("Job %s is created.", aj.Name))
	switch {
	case isTrue(d, batchv1beta1.JobCompleted):
		apply(mindxdlv1.JobSucceeded, ReasonJobSucceeded, fmt.Sprintf("Job %s successfully completed.", ref))
	case isTrue(d, batchv1beta1.JobFailedCond):
		reason, message := failure(aj, jobs.Condition(d, batchv1beta1.JobFailedCond))
		apply(mindxdlv1.JobFailed, reason, message)
	case isTrue(d, batchv1beta1.JobReplicaFailure):
		apply(mindxdlv1.JobRestarting, ReasonJobRestarting,
			fmt.Sprintf("Job %s is restarting: %s", ref, jobs.Condition(d, batchv1beta1.JobReplicaFailure).Message))
	case d.Phase == batchv1beta1.JobRunning:
		apply(mindxdlv1.JobRunning, ReasonJobRunning, fmt.Sprintf("Job %s is running.", ref))
	}
	if len(set) > 0 {
		aj.Status.LastReconcileTime = &now
	}
	return set
}

// failure returns the reason and message of the Failed condition of a job
// the engine failed as c says.
func failure(aj *mindxdlv1.AscendJob, c *batchv1beta1.JobCondition) (string, string) {
	switch c.Reason {
	case jobs.ReasonInvalid:
		if ps := check(aj); len(ps) > 0 {
			return ReasonJobValidFail, ps[0].reason + ": " + ps[0].err.Error()
		}
		return ReasonJobValidFail, c.Message
	case jobs.ReasonBackoffLimit:
		return ReasonJobFailed, fmt.Sprintf("Job %s has failed because it has reached the specified backoff limit", aj.Name)
	}
	return ReasonJobFailed, fmt.Sprintf("Job %s/%s has failed: %s", aj.Namespace, aj.Name, c.Message)
}

func isTrue(s *batchv1beta1.JobStatus, typ batchv1beta1.JobConditionType) bool {
	c := jobs.Condition(s, typ)
	return c != nil && c.Status == corev1.ConditionTrue
}

// setCondition sets condition typ True as Kubeflow does: unchanged when it
// is already True with the reason; otherwise moved to the end. Running and
// Restarting replace each other, and Running turns False once the job
// succeeds or fails.
func setCondition(conds *[]mindxdlv1.JobCondition, typ mindxdlv1.JobConditionType, reason, message string, now metav1.Time) (mindxdlv1.JobCondition, bool) {
	c := mindxdlv1.JobCondition{Type: typ, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastUpdateTime: now, LastTransitionTime: now}
	var kept []mindxdlv1.JobCondition
	for _, o := range *conds {
		if o.Type == typ {
			if o.Status == c.Status && o.Reason == reason {
				return o, false
			}
			if o.Status == c.Status {
				c.LastTransitionTime = o.LastTransitionTime
			}
			continue
		}
		if (typ == mindxdlv1.JobRunning && o.Type == mindxdlv1.JobRestarting) || (typ == mindxdlv1.JobRestarting && o.Type == mindxdlv1.JobRunning) {
			continue
		}
		if (typ == mindxdlv1.JobSucceeded || typ == mindxdlv1.JobFailed) && o.Type == mindxdlv1.JobRunning && o.Status != corev1.ConditionFalse {
			o.Status, o.LastTransitionTime, o.LastUpdateTime = corev1.ConditionFalse, now, now
		}
		kept = append(kept, o)
	}
	*conds = append(kept, c)
	return c, true
}
