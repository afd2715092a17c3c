package colossalai

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/sshjob"
)

var specPath = field.NewPath("spec")

// Validate checks a ColossalAIJob: one layout, a worker type, at most one
// launcher, clean ssh paths, and what the engine checks of every kind. The
// worker container's name is free: the one named worker, or else the
// first, runs sshd.
func (Kind) Validate(obj, old client.Object) field.ErrorList {
	cj := obj.(*batchv1beta1.ColossalAIJob)
	errs := jobs.ValidateShape(shape(cj))
	if ssh := cj.Spec.SSH; ssh != nil {
		p := specPath.Child("ssh")
		errs = append(errs, sshjob.ValidatePath(p.Child("authMountPath"), ssh.AuthMountPath)...)
		errs = append(errs, sshjob.ValidatePath(p.Child("sshdPath"), ssh.SSHDPath)...)
	}
	if l := cj.Spec.Launcher; l != nil {
		errs = append(errs, sshjob.ValidatePath(specPath.Child("launcher", "workingDir"), l.WorkingDir)...)
	}
	if cj.Spec.Worker == nil {
		workers := false
		for i, rs := range cj.Spec.ReplicaSpecs {
			p := specPath.Child("replicaSpecs").Index(i)
			switch rs.Type {
			case batchv1beta1.ColossalAIWorker:
				workers = true
				if rs.Template == nil || len(rs.Template.Spec.Containers) == 0 {
					errs = append(errs, field.Required(p.Child("template", "spec", "containers"), "the workers need a container, which runs sshd"))
				}
			case batchv1beta1.ColossalAILauncher:
				if n := jobs.ReplicaCount(rs.Replicas); n != 1 {
					errs = append(errs, field.Invalid(p.Child("replicas"), n, "a ColossalAIJob has one launcher"))
				}
			default:
				errs = append(errs, field.NotSupported(p.Child("type"), string(rs.Type), []string{Launcher, Worker}))
			}
		}
		if !workers {
			errs = append(errs, field.Required(specPath.Child("replicaSpecs"), "a replica type worker is required"))
		}
	}
	if old != nil {
		errs = append(errs, jobs.ValidateShapeUpdate(shape(old.(*batchv1beta1.ColossalAIJob)), shape(cj))...)
	}
	return errs
}

// shape is what the engine checks: the two types, the run mode and the
// scheduler.
func shape(cj *batchv1beta1.ColossalAIJob) jobs.Shape {
	sh := jobs.Shape{Name: cj.Name, RunMode: cj.Spec.RunMode, Scheduler: cj.Spec.Scheduler,
		Types: []string{Launcher, Worker}, MaxReplicas: []int32{1, settingsOf(cj).Workers}}
	if cj.Spec.Worker != nil {
		sh.CountPath = specPath.Child("worker", "replicas")
	}
	return sh
}
