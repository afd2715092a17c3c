package jobs

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// Replica phases besides the pod phases.
const (
	// PhaseCreating is a pod created but not yet placed on a node.
	PhaseCreating = "Creating"
	// PhaseDeleted is a replica whose pod the engine deleted.
	PhaseDeleted = "Deleted"
)

// Condition reasons and messages, as the T9k manual shows them.
const (
	reasonNone           = "-"
	reasonSucceeded      = "Succeeded"
	reasonFailed         = "Failed"
	reasonPaused         = "Paused"
	reasonPausing        = "Pausing"
	reasonResumed        = "Resumed"
	reasonReplicaFailed  = "ReplicaFailed"
	reasonNotAllRunning  = "PodsNotRunning"
	msgInitialized       = "The job has been initialized successfully."
	msgAllRunning        = "All pods are running normally."
	msgSucceeded         = "The job has finished successfully."
	msgPaused            = "The job is paused: its pods are deleted."
	msgPausing           = "The job is pausing: its pods are being deleted."
	msgResumed           = "The job has resumed."
	ReasonDeadline       = "DeadlineExceeded"
	ReasonBackoffLimit   = "BackoffLimitExceeded"
	ReasonInvalid        = "InvalidSpec"
	ReasonCreationFailed = "CreationFailed"
)

// replicaPhase returns the phase of a replica's pod as the status shows it:
// its pod phase, or Creating until it is placed on a node.
func replicaPhase(pod *corev1.Pod) string {
	switch {
	case pod.Status.Phase == corev1.PodPending && pod.Spec.NodeName == "":
		return PhaseCreating
	case pod.Status.Phase == "":
		return PhaseCreating
	}
	return string(pod.Status.Phase)
}

// containerStatuses returns the state of each container of pod.
func containerStatuses(pod *corev1.Pod) []batchv1beta1.ContainerStatus {
	var out []batchv1beta1.ContainerStatus
	for _, s := range pod.Status.ContainerStatuses {
		c := batchv1beta1.ContainerStatus{Name: s.Name}
		switch {
		case s.State.Terminated != nil:
			c.State, c.ExitCode = "Terminated", s.State.Terminated.ExitCode
		case s.State.Running != nil:
			c.State = "Running"
		case s.State.Waiting != nil:
			c.State = "Waiting"
		}
		out = append(out, c)
	}
	return out
}

// ListedReplicas is the most replicas of one type whose entries the status
// lists one by one; a type with more is counted by phase instead
// (Tasks.Aggregate). A job's status is one object, which the API server
// refuses to store past about 1.5 MiB: at a few thousand entries of a few
// hundred bytes each, it could no longer be written, and the job would
// neither progress nor fail. With 64 entries per type, the status of a job
// at MaxJobPods stays far below that limit.
//
// The entries are also the engine's memory of each replica's pod: a pod
// that disappears while its entry records it is counted as lost against the
// restart limits, and a replica that had a pod waits for its Service to
// drop that pod's address before it is recreated. A counted type keeps
// neither: its lost pods are recreated without counting, as is a pod lost
// before any status recorded it, and at once.
const ListedReplicas = 64

// buildTasks returns the tasks status: per replica type, the recreations
// counted so far and an entry per replica whose pod exists or existed. A pod
// the engine deletes or deleted is Deleted: deleting names those it is about
// to delete, deleted those it did. Deleted also marks the entries of lost
// pods once counted, so that a loss is counted once. A type of more than
// ListedReplicas replicas gets counts per phase instead of entries.
func buildTasks(job *Job, states *States, b *budget, deleting map[string]bool, obs observed) []batchv1beta1.Tasks {
	previous := obs.previous
	tasks := make([]batchv1beta1.Tasks, 0, len(job.Replicas))
	byType := map[string]int{}
	for _, r := range job.Replicas {
		byType[r.Type] = len(tasks)
		t := batchv1beta1.Tasks{Type: r.Type, RestartCount: b.perType[r.Type]}
		if r.Replicas > ListedReplicas {
			t.Aggregate = &batchv1beta1.Aggregate{}
		}
		tasks = append(tasks, t)
	}
	for _, rs := range states.All() {
		var e batchv1beta1.ReplicaStatus
		switch {
		case rs.Pod != nil:
			e = batchv1beta1.ReplicaStatus{Name: rs.Name, UID: rs.Pod.UID, Phase: replicaPhase(rs.Pod), Containers: containerStatuses(rs.Pod)}
			if p, ok := previous[rs.Name]; deleting[rs.Name] || obs.deleted(rs.Pod.UID) || (ok && p.UID == rs.Pod.UID && p.Phase == PhaseDeleted) {
				e.Phase = PhaseDeleted
			}
		case rs.restart:
			// Lost: recorded as deleted so that it is counted once.
			p := previous[rs.Name]
			e = batchv1beta1.ReplicaStatus{Name: rs.Name, UID: p.UID, Phase: PhaseDeleted, Containers: p.Containers}
		default:
			p, ok := previous[rs.Name]
			if !ok {
				continue // never created
			}
			e = p
			e.Phase = PhaseDeleted
		}
		t := &tasks[byType[rs.Type]]
		if t.Aggregate != nil {
			count(t.Aggregate, e.Phase)
			continue
		}
		t.Replicas = append(t.Replicas, e)
	}
	return tasks
}

// aggregate counts the replicas of tasks by phase: their entries, and the
// counts of the types counted in aggregate.
func aggregate(tasks []batchv1beta1.Tasks) batchv1beta1.Aggregate {
	var a batchv1beta1.Aggregate
	for _, t := range tasks {
		for _, r := range t.Replicas {
			count(&a, r.Phase)
		}
		if c := t.Aggregate; c != nil {
			a.Creating += c.Creating
			a.Pending += c.Pending
			a.Running += c.Running
			a.Succeeded += c.Succeeded
			a.Failed += c.Failed
			a.Deleted += c.Deleted
			a.Unknown += c.Unknown
		}
	}
	return a
}

// count adds one replica in phase to a.
func count(a *batchv1beta1.Aggregate, phase string) {
	switch phase {
	case PhaseCreating:
		a.Creating++
	case string(corev1.PodPending):
		a.Pending++
	case string(corev1.PodRunning):
		a.Running++
	case string(corev1.PodSucceeded):
		a.Succeeded++
	case string(corev1.PodFailed):
		a.Failed++
	case PhaseDeleted:
		a.Deleted++
	default:
		a.Unknown++
	}
}

// setCondition sets condition typ of s, keeping its transition time when its
// status does not change.
func setCondition(s *batchv1beta1.JobStatus, typ batchv1beta1.JobConditionType, status corev1.ConditionStatus, reason, message string, now metav1.Time) {
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if c.Type != typ {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return
	}
	s.Conditions = append(s.Conditions, batchv1beta1.JobCondition{
		Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: now,
	})
}

// Condition returns condition typ of s, or nil.
func Condition(s *batchv1beta1.JobStatus, typ batchv1beta1.JobConditionType) *batchv1beta1.JobCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == typ {
			return &s.Conditions[i]
		}
	}
	return nil
}

// isTrue reports whether condition typ of s is True.
func isTrue(s *batchv1beta1.JobStatus, typ batchv1beta1.JobConditionType) bool {
	c := Condition(s, typ)
	return c != nil && c.Status == corev1.ConditionTrue
}

// Finished reports whether the job has succeeded or failed.
func Finished(s *batchv1beta1.JobStatus) bool {
	return isTrue(s, batchv1beta1.JobCompleted) || isTrue(s, batchv1beta1.JobFailedCond)
}

// finish records outcome o in s: Completed, Failed and Running conditions,
// phase and completion time.
func finish(s *batchv1beta1.JobStatus, o Outcome, now metav1.Time) {
	yes, no := corev1.ConditionTrue, corev1.ConditionFalse
	if o.Succeeded {
		setCondition(s, batchv1beta1.JobRunningCond, no, o.Reason, o.Message, now)
		setCondition(s, batchv1beta1.JobFailedCond, no, o.Reason, o.Message, now)
		setCondition(s, batchv1beta1.JobCompleted, yes, o.Reason, o.Message, now)
		s.Phase = batchv1beta1.JobSucceeded
	} else {
		setCondition(s, batchv1beta1.JobRunningCond, no, o.Reason, o.Message, now)
		setCondition(s, batchv1beta1.JobCompleted, no, o.Reason, o.Message, now)
		setCondition(s, batchv1beta1.JobFailedCond, yes, o.Reason, o.Message, now)
		s.Phase = batchv1beta1.JobFailed
	}
	if s.CompletionTime == nil {
		s.CompletionTime = &now
	}
}

// Succeed is the outcome of a job that finished successfully.
func Succeed() Outcome {
	return Outcome{Done: true, Succeeded: true, Reason: reasonSucceeded, Message: msgSucceeded}
}

// Fail is the outcome of a job that failed, with the reason Failed.
func Fail(message string) Outcome {
	return Outcome{Done: true, Reason: reasonFailed, Message: message}
}

// progress sets the conditions and phase of a job that runs (neither
// finished nor paused) from its replicas' states.
func progress(s *batchv1beta1.JobStatus, job *Job, states *States, now metav1.Time) {
	all := states.All()
	created, running, started := 0, 0, 0
	var failure *ReplicaState
	for _, rs := range all {
		if rs.Pod != nil || rs.State == Succeeded || rs.State == Failed || rs.State == Restarting {
			created++
		}
		switch {
		case rs.State == Succeeded:
			started++
		case rs.State == Active && rs.Pod.Status.Phase == corev1.PodRunning:
			running++
			started++
		}
		if failure == nil && (rs.restart || rs.State == Failed || (rs.State == Restarting && rs.Pod != nil && rs.Pod.DeletionTimestamp == nil)) {
			failure = rs
		}
	}
	if created == len(all) {
		setCondition(s, batchv1beta1.JobInitialized, corev1.ConditionTrue, reasonNone, msgInitialized, now)
	}
	if !isTrue(s, batchv1beta1.JobInitialized) {
		if s.Phase == "" {
			s.Phase = batchv1beta1.JobPending
		}
		return
	}
	if started == len(all) && running > 0 {
		setCondition(s, batchv1beta1.JobRunningCond, corev1.ConditionTrue, reasonNone, msgAllRunning, now)
	} else {
		setCondition(s, batchv1beta1.JobRunningCond, corev1.ConditionFalse, reasonNotAllRunning,
			fmtCount(running, len(all))+" pods are running.", now)
	}
	if failure != nil {
		setCondition(s, batchv1beta1.JobReplicaFailure, corev1.ConditionTrue, reasonReplicaFailed,
			"Replica "+failure.Name+" "+failure.Detail+".", now)
	} else if !quotaRefused(s) {
		// A quota's refusal is cleared by the reconcile that creates the
		// refused pods (recordQuota), not here.
		setCondition(s, batchv1beta1.JobReplicaFailure, corev1.ConditionFalse, reasonNone, msgAllRunning, now)
	}
	gang := int(job.MinMember)
	if gang == 0 || gang > len(all) {
		gang = len(all)
	}
	switch s.Phase {
	case "", batchv1beta1.JobPending, batchv1beta1.JobResuming, batchv1beta1.JobPaused:
		if started >= gang && started > 0 {
			s.Phase = batchv1beta1.JobRunning
		} else if s.Phase == "" || s.Phase == batchv1beta1.JobPaused {
			s.Phase = batchv1beta1.JobPending
		}
	}
}

func fmtCount(n, of int) string {
	return strconv.Itoa(n) + " of " + strconv.Itoa(of)
}
