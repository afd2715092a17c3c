package jobs

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// State is where one replica stands.
type State int

// The replica states.
const (
	// Missing: no pod yet; the engine creates it.
	Missing State = iota
	// Active: the pod is pending or running.
	Active
	// Succeeded: the pod succeeded and is not recreated.
	Succeeded
	// Failed: the pod failed (or was lost) and is not recreated.
	Failed
	// Restarting: the pod ended, is being deleted, or was lost, and the
	// engine recreates it.
	Restarting
)

// ReplicaState is where one replica stands.
type ReplicaState struct {
	// Type and Rank name the replica; Name is its pod's name.
	Type string
	Rank int32
	Name string
	// Pod is the replica's pod, nil when there is none.
	Pod *corev1.Pod
	// State is where it stands.
	State State
	// Detail says how its pod ended, for messages.
	Detail string
	// Exhausted is true when it failed for good because no restarts were
	// left.
	Exhausted bool
	// restart is set when this reconcile recreates it: the recreation
	// counts against the budgets.
	restart bool
	// unfinished: the status records this pod as deleted by the engine,
	// yet it stands, undeleted (the controller stopped between writing the
	// status and deleting it); the deletion is carried out again.
	unfinished bool
}

// States are the states of a job's replicas.
type States struct {
	list   []*ReplicaState
	byName map[string]*ReplicaState
}

// All returns every replica's state, in rank order.
func (s *States) All() []*ReplicaState { return s.list }

// Get returns the state of replica typ rank, or nil if the job has no such
// replica.
func (s *States) Get(_, typ string, rank int32) *ReplicaState {
	for _, rs := range s.list {
		if rs.Type == typ && rs.Rank == rank {
			return rs
		}
	}
	return nil
}

// AllReady reports whether every replica of type typ has a pod that is
// Ready and not being deleted; true when the type has no replicas.
func (s *States) AllReady(typ string) bool {
	for _, rs := range s.list {
		if rs.Type == typ && (rs.State != Active || rs.Pod.DeletionTimestamp != nil || !podReady(rs.Pod)) {
			return false
		}
	}
	return true
}

// podReady reports whether pod's Ready condition is true.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Count returns how many replicas are in state st.
func (s *States) Count(st State) int {
	n := 0
	for _, r := range s.list {
		if r.State == st {
			n++
		}
	}
	return n
}

// observed is what the engine knows of a job's replicas before planning.
type observed struct {
	// pods are the job's own pods by name.
	pods map[string]*corev1.Pod
	// previous are the replica entries of the last written status, by name.
	previous map[string]batchv1beta1.ReplicaStatus
	// deleted reports whether the engine deleted the pod with a UID.
	deleted func(types.UID) bool
}

// budget tracks the restarts left to a job.
type budget struct {
	job     *Job
	perType map[string]int32 // recreations so far, per type
	total   int32            // recreations so far, every type
}

func newBudget(job *Job) *budget {
	b := &budget{job: job, perType: map[string]int32{}}
	for _, t := range job.Status.Tasks {
		b.perType[t.Type] = t.RestartCount
		b.total += t.RestartCount
	}
	if job.BackoffCount != nil {
		b.total = *job.BackoffCount
	}
	return b
}

// take spends one restart of type typ, or reports false when none is left.
func (b *budget) take(r *Replica) bool {
	if r.Restart.Limit != nil && b.perType[r.Type] >= *r.Restart.Limit {
		return false
	}
	if b.job.BackoffLimit != nil && b.total >= *b.job.BackoffLimit {
		return false
	}
	b.perType[r.Type]++
	b.total++
	return true
}

// plan works out every replica's state from what was observed, spending the
// budget on the replicas to recreate (marked restart). A finished job
// recreates nothing.
func plan(job *Job, obs observed, b *budget, finished bool) *States {
	s := &States{byName: map[string]*ReplicaState{}}
	name := job.Object.GetName()
	for i := range job.Replicas {
		r := &job.Replicas[i]
		for rank := int32(0); rank < r.Replicas; rank++ {
			rs := &ReplicaState{Type: r.Type, Rank: rank, Name: r.PodName(name, rank)}
			rs.Pod = obs.pods[rs.Name]
			classify(rs, r, obs, b, finished)
			s.list = append(s.list, rs)
			s.byName[rs.Name] = rs
		}
	}
	return s
}

// classify sets the state of one replica.
func classify(rs *ReplicaState, r *Replica, obs observed, b *budget, finished bool) {
	prev, known := obs.previous[rs.Name]
	pod := rs.Pod
	switch {
	case pod == nil:
		lost := known && prev.UID != "" && prev.Phase != PhaseDeleted && !obs.deleted(prev.UID)
		switch {
		case !lost:
			rs.State = Missing
		case finished:
			rs.State, rs.Detail = Failed, "was lost"
		case b.take(r):
			rs.State, rs.Detail, rs.restart = Restarting, "was lost", true
		default:
			rs.State, rs.Detail, rs.Exhausted = Failed, "was lost and no restarts are left", true
		}
	case pod.DeletionTimestamp != nil || obs.deleted(pod.UID) || (known && prev.UID == pod.UID && prev.Phase == PhaseDeleted):
		// Being deleted: by the engine (already counted) or by someone else
		// (counted once it is gone, as lost).
		rs.State, rs.Detail = Restarting, "is being deleted"
		rs.unfinished = pod.DeletionTimestamp == nil && !obs.deleted(pod.UID)
		if t, ok := Terminated(pod, mainContainerName(pod, r.MainContainer)); ok && !t.Disrupted && finished {
			rs.State, rs.Detail = terminalState(t), t.Detail
		}
	default:
		t, ok := Terminated(pod, mainContainerName(pod, r.MainContainer))
		switch {
		case !ok:
			rs.State = Active
		case finished || !WantsRestart(r.Restart.Policy, t):
			rs.State, rs.Detail = terminalState(t), t.Detail
		case b.take(r):
			rs.State, rs.Detail, rs.restart = Restarting, t.Detail, true
		case t.Succeeded:
			rs.State, rs.Detail = Succeeded, t.Detail
		default:
			rs.State, rs.Detail, rs.Exhausted = Failed, t.Detail+" and no restarts are left", true
		}
	}
}

func terminalState(t Termination) State {
	if t.Succeeded {
		return Succeeded
	}
	return Failed
}

// StatesOf returns the states of job's replicas given its pods, as the
// engine sees a job with no history: nothing counted, nothing deleted, no
// recreation. It lets a kind's Outcome be worked out outside a reconcile.
func StatesOf(job *Job, pods []*corev1.Pod) *States {
	obs := observed{pods: map[string]*corev1.Pod{}, previous: map[string]batchv1beta1.ReplicaStatus{}, deleted: func(types.UID) bool { return false }}
	for _, p := range pods {
		obs.pods[p.Name] = p
	}
	return plan(job, obs, &budget{job: job, perType: map[string]int32{}}, true)
}
