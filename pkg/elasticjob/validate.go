package elasticjob

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

var (
	strategies      = []string{"", elasticv1alpha1.ParameterServerStrategy, elasticv1alpha1.AllreduceStrategy, elasticv1alpha1.LocalStrategy, elasticv1alpha1.CustomStrategy}
	optimizeModes   = []string{"", "single-job", "cluster", "manual", "manunal"}
	restartPolicies = []string{"", string(elasticv1alpha1.RestartPolicyAlways), string(elasticv1alpha1.RestartPolicyOnFailure),
		string(elasticv1alpha1.RestartPolicyNever), string(elasticv1alpha1.RestartPolicyExitCode)}
	batchSchedulers = []string{"", "default", "volcano"}
	scaleTypes      = []string{elasticv1alpha1.ScaleTypeAuto, elasticv1alpha1.ScaleTypeManual}
)

// ValidateElasticJob returns what makes job unable to run, by field.
func ValidateElasticJob(job *elasticv1alpha1.ElasticJob) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	errs = append(errs, oneOf(spec.Child("distributionStrategy"), job.Spec.DistributionStrategy, strategies)...)
	errs = append(errs, oneOf(spec.Child("optimizeMode"), job.Spec.OptimizeMode, optimizeModes)...)
	specs := spec.Child("replicaSpecs")
	if len(job.Spec.ReplicaSpecs) == 0 {
		errs = append(errs, field.Required(specs, "a job needs at least one replica spec"))
	}
	tasks := 0
	for _, t := range sortedTypes(job.Spec.ReplicaSpecs) {
		p := specs.Key(string(t))
		s := job.Spec.ReplicaSpecs[t]
		if !t.IsKnown() {
			errs = append(errs, field.NotSupported(specs, string(t), typeNames()))
			continue
		}
		if s == nil {
			errs = append(errs, field.Required(p, "a replica spec may not be null"))
			continue
		}
		if t != elasticv1alpha1.ReplicaTypeMaster {
			tasks++
		}
		errs = append(errs, validateReplicaSpec(p, t, s)...)
	}
	if len(job.Spec.ReplicaSpecs) > 0 && tasks == 0 {
		errs = append(errs, field.Required(specs, "a job needs a ps, worker, chief or evaluator replica spec"))
	}
	return errs
}

// validateReplicaSpec checks the spec of type t at p.
func validateReplicaSpec(p *field.Path, t elasticv1alpha1.ReplicaType, s *elasticv1alpha1.ReplicaSpec) field.ErrorList {
	var errs field.ErrorList
	if s.Replicas < 0 {
		errs = append(errs, field.Invalid(p.Child("replicas"), s.Replicas, "must not be negative"))
	}
	if s.RestartCount < 0 {
		errs = append(errs, field.Invalid(p.Child("restartCount"), s.RestartCount, "must not be negative"))
	}
	if s.RestartTimeout < 0 {
		errs = append(errs, field.Invalid(p.Child("restartTimeout"), s.RestartTimeout, "must not be negative"))
	}
	errs = append(errs, oneOf(p.Child("restartPolicy"), string(s.RestartPolicy), restartPolicies)...)
	errs = append(errs, oneOf(p.Child("BatchScheduler"), s.BatchScheduler, batchSchedulers)...)
	if s.Priority != "" && s.Priority != "high" && s.Priority != "low" {
		if f, err := strconv.ParseFloat(s.Priority, 64); err != nil || f < 0 || f > 1 {
			errs = append(errs, field.Invalid(p.Child("priority"), s.Priority, "must be high, low or a fraction between 0 and 1"))
		}
	}
	cs := p.Child("template", "spec", "containers")
	if len(s.Template.Spec.Containers) == 0 {
		return append(errs, field.Required(cs, "the pods need a container"))
	}
	// The controller gives a master without an image DLRover's.
	if t != elasticv1alpha1.ReplicaTypeMaster && s.Template.Spec.Containers[0].Image == "" {
		errs = append(errs, field.Required(cs.Index(0).Child("image"), "the task pods need an image"))
	}
	switch s.Template.Spec.RestartPolicy {
	case "", corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	default:
		errs = append(errs, field.NotSupported(p.Child("template", "spec", "restartPolicy"), s.Template.Spec.RestartPolicy,
			[]corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	}
	return errs
}

// ValidateScalePlan returns what makes plan unable to run, by field. job is
// the plan's owner, or nil when it does not exist (yet); with it, the plan
// may name only the replica types the job has.
func ValidateScalePlan(plan *elasticv1alpha1.ScalePlan, job *elasticv1alpha1.ElasticJob) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if PlanOwner(plan) == "" {
		errs = append(errs, field.Required(spec.Child("ownerJob"), "name the ElasticJob to scale here or in the label "+elasticv1alpha1.JobNameLabelKey))
	}
	if l, ok := plan.Labels[elasticv1alpha1.JobNameLabelKey]; ok && plan.Spec.OwnerJob != "" && l != plan.Spec.OwnerJob {
		errs = append(errs, field.Invalid(spec.Child("ownerJob"), plan.Spec.OwnerJob, "differs from the label "+elasticv1alpha1.JobNameLabelKey+" "+l))
	}
	if v, ok := plan.Labels[elasticv1alpha1.ScaleTypeLabelKey]; ok {
		errs = append(errs, oneOf(field.NewPath("metadata", "labels").Key(elasticv1alpha1.ScaleTypeLabelKey), v, scaleTypes)...)
	}
	rrs := spec.Child("replicaResourceSpecs")
	for _, t := range sortedTypes(plan.Spec.ReplicaResourceSpecs) {
		errs = append(errs, checkType(rrs.Key(string(t)), t, job)...)
		if n := plan.Spec.ReplicaResourceSpecs[t].Replicas; n < 0 {
			errs = append(errs, field.Invalid(rrs.Key(string(t)).Child("replicas"), n, "must not be negative"))
		}
	}
	for i, pm := range plan.Spec.CreatePods {
		p := spec.Child("createPods").Index(i)
		if pm.Type == "" {
			errs = append(errs, field.Required(p.Child("type"), "the replica type of the pod to create"))
		} else {
			errs = append(errs, checkType(p.Child("type"), pm.Type, job)...)
		}
		if pm.ID < 0 || pm.RankIndex < 0 {
			errs = append(errs, field.Invalid(p, fmt.Sprintf("id %d, rankIndex %d", pm.ID, pm.RankIndex), "must not be negative"))
		}
	}
	for i, pm := range plan.Spec.RemovePods {
		p := spec.Child("removePods").Index(i)
		if pm.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "the name of the pod to remove"))
		}
		if pm.Type != "" {
			errs = append(errs, checkType(p.Child("type"), pm.Type, job)...)
		}
	}
	for i, pm := range plan.Spec.MigratePods {
		if pm.Type != "" {
			errs = append(errs, checkType(spec.Child("migratePods").Index(i).Child("type"), pm.Type, job)...)
		}
	}
	return errs
}

// checkType refuses an unknown replica type, or a task type the job has no
// spec for.
func checkType(p *field.Path, t elasticv1alpha1.ReplicaType, job *elasticv1alpha1.ElasticJob) field.ErrorList {
	if !t.IsKnown() {
		return field.ErrorList{field.NotSupported(p, string(t), typeNames())}
	}
	if job != nil && t != elasticv1alpha1.ReplicaTypeMaster && replicaSpecFor(job, t) == nil {
		return field.ErrorList{field.Invalid(p, string(t), fmt.Sprintf("ElasticJob %s has no replica spec %s", job.Name, t))}
	}
	return nil
}

// typeNames are the replica types, for messages.
func typeNames() []string {
	out := make([]string, 0, len(elasticv1alpha1.TaskTypes)+1)
	for _, t := range elasticv1alpha1.TaskTypes {
		out = append(out, string(t))
	}
	return append(out, string(elasticv1alpha1.ReplicaTypeMaster))
}

// oneOf refuses v at p unless it is one of allowed.
func oneOf(p *field.Path, v string, allowed []string) field.ErrorList {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	var shown []string
	for _, a := range allowed {
		if a != "" {
			shown = append(shown, a)
		}
	}
	return field.ErrorList{field.NotSupported(p, v, shown)}
}
