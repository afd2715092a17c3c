package pytorch

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

var specPath = field.NewPath("spec")

// Validate checks a PyTorchTrainingJob: the common shape, a master with a
// replica, elastic training only with torchrun and with minReplicas <=
// maxReplicas, and bounds that do not change.
func (Kind) Validate(obj, old client.Object) field.ErrorList {
	pj := obj.(*batchv1beta1.PyTorchTrainingJob)
	errs := jobs.ValidateShape(shape(pj))
	errs = append(errs, jobs.ValidateRunPolicy(&pj.Spec.RunPolicy)...)
	var oldTB *tensorstackv1beta1.TensorBoardSpec
	if old != nil {
		oldTB = old.(*batchv1beta1.PyTorchTrainingJob).Spec.TensorboardSpec
	}
	errs = append(errs, jobs.ValidateTensorBoard(pj.Spec.TensorboardSpec, oldTB)...)
	if idx := order(pj); len(idx) > 0 {
		if rs := pj.Spec.ReplicaSpecs[idx[0]]; jobs.ReplicaCount(rs.Replicas) < 1 && elasticOf(pj) == nil {
			errs = append(errs, field.Invalid(specPath.Child("replicaSpecs").Index(idx[0]).Child("replicas"), 0,
				"the master type ("+rs.Type+") needs at least one replica"))
		}
	}
	if e := pj.Spec.Elastic; e != nil {
		p := specPath.Child("elastic")
		if e.Enabled && (pj.Spec.TorchrunConfig == nil || !pj.Spec.TorchrunConfig.Enabled) {
			errs = append(errs, field.Invalid(p.Child("enabled"), true, "elastic training needs spec.torchrunConfig.enabled"))
		}
		if e.MinReplicas != nil && e.MaxReplicas != nil && *e.MinReplicas > *e.MaxReplicas {
			errs = append(errs, field.Invalid(p.Child("minReplicas"), *e.MinReplicas, "must not exceed maxReplicas"))
		}
	}
	if old != nil {
		op := old.(*batchv1beta1.PyTorchTrainingJob)
		errs = append(errs, jobs.ValidateShapeUpdate(shape(op), shape(pj))...)
		oldMin, oldMax := bounds(op)
		newMin, newMax := bounds(pj)
		if !equality.Semantic.DeepEqual(oldMin, newMin) {
			errs = append(errs, field.Forbidden(specPath.Child("elastic", "minReplicas"), "cannot be changed after the job is created"))
		}
		if !equality.Semantic.DeepEqual(oldMax, newMax) {
			errs = append(errs, field.Forbidden(specPath.Child("elastic", "maxReplicas"), "cannot be changed after the job is created"))
		}
	}
	return errs
}

func bounds(pj *batchv1beta1.PyTorchTrainingJob) (*int32, *int32) {
	if pj.Spec.Elastic == nil {
		return nil, nil
	}
	return pj.Spec.Elastic.MinReplicas, pj.Spec.Elastic.MaxReplicas
}

func shape(pj *batchv1beta1.PyTorchTrainingJob) jobs.Shape {
	s := jobs.Shape{Name: pj.Name, RunMode: pj.Spec.RunMode, Scheduler: pj.Spec.Scheduler}
	e := elasticOf(pj)
	for _, rs := range pj.Spec.ReplicaSpecs {
		n := jobs.ReplicaCount(rs.Replicas)
		if e != nil && e.max > n {
			n = e.max
		}
		s.Types = append(s.Types, rs.Type)
		s.MaxReplicas = append(s.MaxReplicas, n)
	}
	return s
}
