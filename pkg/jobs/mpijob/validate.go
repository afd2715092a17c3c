package mpijob

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/sshjob"
)

var specPath = field.NewPath("spec")

// Validate checks an MPIJob: one layout; a worker container of the
// layout's name; at most one launcher; clean ssh paths; MCA names without
// whitespace; and what the engine checks of every kind.
func (Kind) Validate(obj, old client.Object) field.ErrorList {
	mj := obj.(*batchv1beta1.MPIJob)
	errs := jobs.ValidateShape(shape(mj))
	if ssh := mj.Spec.SSH; ssh != nil {
		p := specPath.Child("ssh")
		errs = append(errs, sshjob.ValidatePath(p.Child("sshAuthMountPath"), ssh.SSHAuthMountPath)...)
		errs = append(errs, sshjob.ValidatePath(p.Child("sshdPath"), ssh.SSHDPath)...)
	}
	switch {
	case mj.Spec.Worker != nil && len(mj.Spec.ReplicaSpecs) > 0:
		errs = append(errs, field.Forbidden(specPath.Child("replicaSpecs"), "spec.worker and spec.replicaSpecs are two layouts of one job: use one"))
	case mj.Spec.Worker != nil:
		p := specPath.Child("worker", "template", "spec", "containers")
		if !hasContainer(&mj.Spec.Worker.Template, SeedContainer) {
			errs = append(errs, field.Required(p, "a container named "+SeedContainer+" is required: it runs sshd in the workers and mpirun in the launcher"))
		}
		errs = append(errs, validateMCA(specPath.Child("mca"), mj.Spec.MCA)...)
		errs = append(errs, sshjob.ValidatePath(specPath.Child("mpiHome"), mj.Spec.MPIHome)...)
	default:
		workers := false
		for i := range mj.Spec.ReplicaSpecs {
			rs := &mj.Spec.ReplicaSpecs[i]
			p := specPath.Child("replicaSpecs").Index(i)
			switch rs.Type {
			case batchv1beta1.MPIWorker:
				workers = true
				if !hasContainer(rs.Template, Worker) {
					errs = append(errs, field.Required(p.Child("template", "spec", "containers"), "a container named "+Worker+" is required: it runs sshd"))
				}
			case batchv1beta1.MPILauncher:
				if n := jobs.ReplicaCount(rs.Replicas); n != 1 {
					errs = append(errs, field.Invalid(p.Child("replicas"), n, "an MPIJob has one launcher"))
				}
			default:
				errs = append(errs, field.NotSupported(p.Child("type"), string(rs.Type), []string{Launcher, Worker}))
			}
		}
		if !workers {
			errs = append(errs, field.Required(specPath.Child("replicaSpecs"), "a replica type worker is required"))
		}
		if c := mj.Spec.MPIConfig; c != nil {
			p := specPath.Child("mpiConfig")
			errs = append(errs, validateMCA(p.Child("mca"), c.MCA)...)
			errs = append(errs, sshjob.ValidatePath(p.Child("home"), c.Home)...)
		}
	}
	if old != nil {
		errs = append(errs, jobs.ValidateShapeUpdate(shape(old.(*batchv1beta1.MPIJob)), shape(mj))...)
	}
	return errs
}

// validateMCA refuses MCA parameter names that mpirun cannot take.
func validateMCA(p *field.Path, mca map[string]string) field.ErrorList {
	var errs field.ErrorList
	for k := range mca {
		if k == "" || strings.ContainsAny(k, " \t\n\r\"'") || strings.HasPrefix(k, "-") {
			errs = append(errs, field.Invalid(p.Key(k), k, "an MCA parameter name has no whitespace or quotes and does not start with -"))
		}
	}
	return errs
}

// hasContainer reports whether tmpl has a container named name.
func hasContainer(tmpl *corev1.PodTemplateSpec, name string) bool {
	if tmpl == nil {
		return false
	}
	for _, c := range tmpl.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// shape is what the engine checks: the two types, the run mode and the
// scheduler.
func shape(mj *batchv1beta1.MPIJob) jobs.Shape {
	s := settingsOf(mj)
	sh := jobs.Shape{
		Name: mj.Name, RunMode: mj.Spec.RunMode, Scheduler: mj.Spec.Scheduler,
		Types: []string{Launcher, Worker}, MaxReplicas: []int32{1, s.Workers},
	}
	if mj.Spec.Worker != nil {
		sh.CountPath = specPath.Child("worker", "replicas")
	}
	return sh
}
