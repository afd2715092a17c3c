package jobs

import (
	"context"
	"errors"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// replicaPlan is what a reconcile decided for the replicas of a job that
// runs.
type replicaPlan struct {
	// budget is the restart budget, less the restarts decided.
	budget *budget
	// states are every replica's state; those marked restart are recreated.
	states *States
	// surplus are the job's pods that no replica wants.
	surplus []*corev1.Pod
}

// planReplicas works out every replica's state, spending the restart budget
// on the replicas to recreate, and asks the kind whether the job has
// finished given those states. A job that has finished (Outcome.Done) gets
// no plan; one that has not also has its surplus pods picked out.
func (r *Reconciler) planReplicas(p *pass) (*replicaPlan, Outcome) {
	pl := &replicaPlan{budget: newBudget(p.job)}
	pl.states = plan(p.job, p.obs, pl.budget, false)
	if o := r.kind.Outcome(p.job, pl.states); o.Done {
		return nil, o
	}
	pl.surplus = surplusPods(p.job, p.pods)
	return pl, Outcome{}
}

// recordPlan writes the plan into the job's status before any pod is
// touched: the conditions and phase of a running job (progress), and the
// replica entries, with the pods about to be recreated or removed marked as
// restarting.
func (r *Reconciler) recordPlan(ctx context.Context, p *pass, pl *replicaPlan) error {
	progress(p.job.Status, p.job, pl.states, p.now)
	if err := r.fillStatus(ctx, p, pl.states, pl.budget, pl.restarting()); err != nil {
		return err
	}
	return r.writeStatus(ctx, p.original, p.obj)
}

// restarting names the pods the plan deletes to be replaced or dropped: the
// pods of the replicas to recreate, and the surplus pods.
func (pl *replicaPlan) restarting() map[string]bool {
	restarting := map[string]bool{}
	for _, rs := range pl.states.All() {
		if rs.restart && rs.Pod != nil {
			restarting[rs.Name] = true
		}
	}
	for _, p := range pl.surplus {
		restarting[p.Name] = true
	}
	return restarting
}

// fillStatus sets the parts of the job's status that follow from the
// replicas' states: the replica entries (the pods named in deleting shown as
// going), the aggregate, the shared restart count b has reached, the kind's
// dependents and the kind's own status fields. It writes nothing but the
// dependents; the caller writes the status.
func (r *Reconciler) fillStatus(ctx context.Context, p *pass, states *States, b *budget, deleting map[string]bool) error {
	job := p.job
	job.Status.Tasks = buildTasks(job, states, b, deleting, p.obs)
	job.Status.Aggregate = aggregate(job.Status.Tasks)
	if job.BackoffCount != nil {
		*job.BackoffCount = b.total
	}
	if d, ok := r.kind.(Dependents); ok {
		if err := d.ReconcileDependents(ctx, r.env(), job); err != nil {
			return err
		}
	}
	if s, ok := r.kind.(StatusReporter); ok {
		s.ReportStatus(job, p.pods)
	}
	return nil
}

// act carries out the plan the status now records: it ensures the job's
// Services and PodGroup, deletes the pods to replace or drop, and creates
// the pods wanted. result is when the job wants its next reconcile so far.
func (r *Reconciler) act(ctx context.Context, p *pass, pl *replicaPlan, result ctrl.Result) (ctrl.Result, error) {
	if err := r.ensureChildren(ctx, p.job, p.services); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.deleteReplaced(ctx, p, pl); err != nil {
		return ctrl.Result{}, err
	}
	return r.startPods(ctx, p, pl, result)
}

// deleteReplaced deletes the pods of the replicas to recreate, with an
// event for each such replica, the pods planned as unfinished, and the
// surplus pods.
func (r *Reconciler) deleteReplaced(ctx context.Context, p *pass, pl *replicaPlan) error {
	for _, rs := range pl.states.All() {
		if rs.restart {
			r.recorder.Eventf(p.obj, nil, corev1.EventTypeWarning, EventRestarting, "RecreatePod",
				"Recreating replica %s, which %s", rs.Name, rs.Detail)
		}
		if (rs.restart || rs.unfinished) && rs.Pod != nil {
			if err := r.deletePod(ctx, rs.Pod); err != nil {
				return err
			}
		}
	}
	return r.deletePods(ctx, pl.surplus)
}

// startPods creates the pods the plan wants, records in the status whether
// a ResourceQuota refused some (recordQuota), and decides when the job is
// reconciled next: after nameTakenRetry when a pod's name was taken, after
// staleAddressRetry when a Service still held an earlier pod's address,
// after quotaRetry at most while a quota refuses pods, else as result says.
func (r *Reconciler) startPods(ctx context.Context, p *pass, pl *replicaPlan, result ctrl.Result) (ctrl.Result, error) {
	written := p.obj.DeepCopyObject().(client.Object)
	quota, err := r.createPods(ctx, p.obj, p.job, pl.states)
	if qerr := r.recordQuota(ctx, written, p.obj, p.job, quota, err); qerr != nil {
		return ctrl.Result{}, errors.Join(err, qerr)
	}
	switch {
	case errors.Is(err, errNameTaken):
		return ctrl.Result{RequeueAfter: nameTakenRetry}, nil
	case errors.Is(err, errStaleAddress):
		return ctrl.Result{RequeueAfter: staleAddressRetry}, nil
	case err != nil:
		return ctrl.Result{}, err
	case len(quota.refused) > 0 && (result.RequeueAfter == 0 || result.RequeueAfter > quotaRetry):
		result.RequeueAfter = quotaRetry
	}
	return result, nil
}

// recordQuota writes into the job's status, written as written, whether a
// ResourceQuota refused some of its pods in this reconcile: ReplicaFailure
// True (ExceededQuota) with the API server's words while it does, False
// again once a reconcile has created every pod it tried to (err nil).
func (r *Reconciler) recordQuota(ctx context.Context, written, obj client.Object, job *Job, quota quotaRefusals, err error) error {
	now := metav1.Now().Rfc3339Copy()
	switch {
	case len(quota.refused) > 0:
		setQuotaRefused(job.Status, quota.refused, quota.wanted, now)
	case err == nil:
		clearQuotaRefused(job.Status, now)
	}
	return r.writeStatus(ctx, written, obj)
}

// surplusPods returns the job's pods that no replica wants: ranks beyond a
// type's count (after scaling down) or types no longer in the spec.
func surplusPods(job *Job, pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		rep := job.Replica(p.Labels[ReplicaTypeLabel])
		rank, err := strconv.Atoi(p.Labels[ReplicaIndexLabel])
		if rep == nil || err != nil || int32(rank) >= rep.Replicas || p.Name != rep.PodName(job.Object.GetName(), int32(rank)) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
