package elasticjob

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

// PlanOwner is the name of the ElasticJob a ScalePlan scales: spec.ownerJob,
// else its elasticjob.dlrover/name label, else its legacy elasticjob-name
// label.
func PlanOwner(plan *elasticv1alpha1.ScalePlan) string {
	if plan.Spec.OwnerJob != "" {
		return plan.Spec.OwnerJob
	}
	if n := plan.Labels[elasticv1alpha1.JobNameLabelKey]; n != "" {
		return n
	}
	return plan.Labels[elasticv1alpha1.LegacyJobNameLabelKey]
}

// planDone reports whether the plan was executed or refused.
func planDone(plan *elasticv1alpha1.ScalePlan) bool {
	return plan.Status.Phase == elasticv1alpha1.JobSucceeded || plan.Status.Phase == elasticv1alpha1.JobFailed
}

// pendingPlans returns the job's ScalePlans not yet executed, oldest first.
func pendingPlans(ctx context.Context, c client.Reader, job *elasticv1alpha1.ElasticJob) ([]elasticv1alpha1.ScalePlan, error) {
	var list elasticv1alpha1.ScalePlanList
	if err := c.List(ctx, &list, client.InNamespace(job.Namespace)); err != nil {
		return nil, fmt.Errorf("listing ScalePlans: %w", err)
	}
	plans := slices.DeleteFunc(list.Items, func(p elasticv1alpha1.ScalePlan) bool {
		return PlanOwner(&p) != job.Name || planDone(&p) || p.DeletionTimestamp != nil
	})
	slices.SortFunc(plans, func(a, b elasticv1alpha1.ScalePlan) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return plans, nil
}

// sortedTypes returns the keys of m in order.
func sortedTypes[V any](m map[elasticv1alpha1.ReplicaType]V) []elasticv1alpha1.ReplicaType {
	out := make([]elasticv1alpha1.ReplicaType, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// setPlanPhase writes the plan's phase, and its create or finish time.
func setPlanPhase(ctx context.Context, c client.Client, plan *elasticv1alpha1.ScalePlan, phase elasticv1alpha1.JobConditionType) error {
	now := metav1.Now()
	if plan.Status.CreateTime == nil {
		plan.Status.CreateTime = &now
	}
	if phase == elasticv1alpha1.JobSucceeded || phase == elasticv1alpha1.JobFailed {
		plan.Status.FinishTime = &now
	}
	plan.Status.Phase = phase
	if err := c.Status().Update(ctx, plan); err != nil {
		return fmt.Errorf("setting ScalePlan %s %s: %w", plan.Name, phase, err)
	}
	return nil
}

// executePlan scales each task type the plan names, creates its createPods
// and deletes its removePods.
func (r *Reconciler) executePlan(ctx context.Context, job *elasticv1alpha1.ElasticJob, plan *elasticv1alpha1.ScalePlan) error {
	view, err := r.view(ctx, job, plan, false)
	if err != nil {
		return err
	}
	for _, t := range elasticv1alpha1.TaskTypes {
		rs, named := plan.Spec.ReplicaResourceSpecs[t]
		if !named && !slices.ContainsFunc(plan.Spec.CreatePods, func(pm elasticv1alpha1.PodMeta) bool { return pm.Type == t }) &&
			!slices.ContainsFunc(plan.Spec.RemovePods, func(pm elasticv1alpha1.PodMeta) bool { return pm.Type == t || pm.Type == "" }) {
			continue
		}
		replicas := -1
		if named {
			replicas = rs.Replicas
			if s := job.Status.ReplicaStatuses[t]; s != nil && s.Initial == 0 {
				s.Initial = int32(rs.Replicas) //nolint:gosec // replica counts are small
			}
		}
		if err := r.task(t).ReconcilePods(ctx, job, replicas, rs.Resource, plan, view); err != nil {
			return fmt.Errorf("executing ScalePlan %s for %s: %w", plan.Name, t, err)
		}
	}
	return nil
}

// view is what new task pods are told about the cluster: the plan's psHosts
// and counts where it gives them, else the replica specs (initial) or the
// alive ranks.
func (r *Reconciler) view(ctx context.Context, job *elasticv1alpha1.ElasticJob, plan *elasticv1alpha1.ScalePlan, initial bool) (clusterView, error) {
	count := func(t elasticv1alpha1.ReplicaType) (int, error) {
		if plan != nil {
			if rs, ok := plan.Spec.ReplicaResourceSpecs[t]; ok {
				return rs.Replicas, nil
			}
		}
		if initial {
			if s := job.Spec.ReplicaSpecs[t]; s != nil {
				return int(s.Replicas), nil
			}
			return 0, nil
		}
		pods, err := listPods(ctx, r.reader, job, t)
		return aliveRanks(pods), err
	}
	ps, err := count(elasticv1alpha1.ReplicaTypePS)
	if err != nil {
		return clusterView{}, err
	}
	workers, err := count(elasticv1alpha1.ReplicaTypeWorker)
	if err != nil {
		return clusterView{}, err
	}
	v := clusterView{psHosts: psHostsOf(job.Name, ps), workers: workers, workerNum: int32(workers)} //nolint:gosec // replica counts are small
	if plan != nil && len(plan.Spec.PsHosts) > 0 {
		v.psHosts = plan.Spec.PsHosts
	}
	return v, nil
}

// runPlans executes the job's pending ScalePlans in order. A plan naming a
// type the job cannot scale is marked Failed, with a Warning event.
func (r *Reconciler) runPlans(ctx context.Context, job *elasticv1alpha1.ElasticJob) error {
	plans, err := pendingPlans(ctx, r.client, job)
	if err != nil {
		return err
	}
	log := ctrl.LoggerFrom(ctx)
	for i := range plans {
		plan := &plans[i]
		// The webhook refuses such plans; this one came past it.
		if errs := ValidateScalePlan(plan, job); len(errs) > 0 {
			log.Info("Refusing ScalePlan", "scalePlan", plan.Name, "errors", errs.ToAggregate().Error())
			r.recorder.Eventf(plan, job, corev1.EventTypeWarning, "InvalidScalePlan", "Scale", "%s", errs.ToAggregate().Error())
			if err := setPlanPhase(ctx, r.client, plan, elasticv1alpha1.JobFailed); err != nil {
				return err
			}
			continue
		}
		log.Info("Executing ScalePlan", "scalePlan", plan.Name, "scaleType", plan.Labels[elasticv1alpha1.ScaleTypeLabelKey])
		if err := setPlanPhase(ctx, r.client, plan, elasticv1alpha1.JobScaling); err != nil {
			return err
		}
		// The job shows the plan before it runs: a write that conflicts
		// stops here, and the plan is run again on a fresh job.
		job.Status.ScalePlan = plan.Name
		setCondition(job, elasticv1alpha1.JobScaling, ReasonJobScaling,
			fmt.Sprintf("ElasticJob %s is scaling by %s with status %s.", job.Name, plan.Name, plan.Status.Phase))
		if err := r.client.Status().Update(ctx, job); err != nil {
			return fmt.Errorf("marking the job scaling: %w", err)
		}
		if err := r.executePlan(ctx, job, plan); err != nil {
			r.recorder.Eventf(job, plan, corev1.EventTypeWarning, "Failed", "Scale", "%v", err)
			return err
		}
		if err := setPlanPhase(ctx, r.client, plan, elasticv1alpha1.JobSucceeded); err != nil {
			return err
		}
	}
	return nil
}
