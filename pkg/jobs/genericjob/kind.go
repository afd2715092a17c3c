package genericjob

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobkind"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// Kind is the GenericJob kind.
type Kind struct{}

var _ jobs.Kind = Kind{}

// Component is the GenericJob's label name.
func (Kind) Component() string { return "genericjob" }

// Info registers the GenericJob kind (jobkind.Info).
var Info = jobkind.T9kJob("GenericJob", "genericjobs", "genericJob")

// Info returns the kind's registration.
func (Kind) Info() jobkind.Info { return Info }

// NewObject returns an empty GenericJob.
func (Kind) NewObject() client.Object { return &batchv1beta1.GenericJob{} }

// View returns the engine's view of a GenericJob: its types in spec order,
// each with its own restart policy and limit, and no shared budget.
func (Kind) View(obj client.Object) *jobs.Job {
	gj := obj.(*batchv1beta1.GenericJob)
	job := &jobs.Job{
		Object:        gj,
		RunMode:       gj.Spec.RunMode,
		CleanUpPolicy: gj.Spec.CleanUpPolicy,
		Scheduler:     gj.Spec.Scheduler,
		Status:        &gj.Status,
	}
	for i := range gj.Spec.ReplicaSpecs {
		rs := &gj.Spec.ReplicaSpecs[i]
		rep := jobs.Replica{
			Type:     rs.Type,
			Replicas: jobs.ReplicaCount(rs.Replicas),
			Restart:  jobs.RestartOf(rs.RestartPolicy),
			Template: &rs.Template,
		}
		if gj.Spec.Service != nil {
			rep.Service, rep.Ports = true, gj.Spec.Service.Ports
		}
		rep.RoleMin = rep.Replicas
		job.Replicas = append(job.Replicas, rep)
	}
	return job
}

// Decorate substitutes the GenericJob variables in the pod's containers.
func (Kind) Decorate(pod *corev1.Pod, r *jobs.Replica, rank int32, job *jobs.Job) []string {
	gj := job.Object.(*batchv1beta1.GenericJob)
	v := &vars{job: gj, typ: r.Type, rank: rank}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := &list[i]
			for j := range c.Command {
				c.Command[j] = v.expand(c.Command[j])
			}
			for j := range c.Args {
				c.Args[j] = v.expand(c.Args[j])
			}
			for j := range c.Env {
				c.Env[j].Value = v.expand(c.Env[j].Value)
			}
		}
	}
	return v.unknownNotes()
}

// Outcome applies the success and failure rules.
func (Kind) Outcome(job *jobs.Job, states *jobs.States) jobs.Outcome {
	return outcome(job.Object.(*batchv1beta1.GenericJob), states)
}

// Validate checks a GenericJob.
func (Kind) Validate(obj, old client.Object) field.ErrorList {
	gj := obj.(*batchv1beta1.GenericJob)
	errs := jobs.ValidateShape(shape(gj))
	errs = append(errs, validateRules(gj)...)
	errs = append(errs, validateService(gj)...)
	if old != nil {
		errs = append(errs, jobs.ValidateShapeUpdate(shape(old.(*batchv1beta1.GenericJob)), shape(gj))...)
	}
	return errs
}

func shape(gj *batchv1beta1.GenericJob) jobs.Shape {
	s := jobs.Shape{Name: gj.Name, RunMode: gj.Spec.RunMode, Scheduler: gj.Spec.Scheduler}
	for _, rs := range gj.Spec.ReplicaSpecs {
		s.Types = append(s.Types, rs.Type)
		s.MaxReplicas = append(s.MaxReplicas, jobs.ReplicaCount(rs.Replicas))
	}
	return s
}
