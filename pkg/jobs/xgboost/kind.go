package xgboost

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobkind"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// Names and defaults shared with the Kubeflow training operator.
const (
	// Container is the name of the main container.
	Container = "xgboost"
	// PortName names the port of the master's tracker (and the workers').
	PortName = "xgboostjob-port"
	// DefaultPort is that port when the template names none.
	DefaultPort = 9999
)

// Kind is the XGBoostTrainingJob kind.
type Kind struct{}

var _ jobs.Kind = Kind{}

// Component is the XGBoostTrainingJob's label name.
func (Kind) Component() string { return "xgboosttrainingjob" }

// Info registers the XGBoostTrainingJob kind (jobkind.Info).
var Info = jobkind.T9kJob("XGBoostTrainingJob", "xgboosttrainingjobs", "xgboostTrainingJob")

// Info returns the kind's registration.
func (Kind) Info() jobkind.Info { return Info }

// NewObject returns an empty XGBoostTrainingJob.
func (Kind) NewObject() client.Object { return &batchv1beta1.XGBoostTrainingJob{} }

// View returns the engine's view: the master first, then the workers.
func (Kind) View(obj client.Object) *jobs.Job {
	xj := obj.(*batchv1beta1.XGBoostTrainingJob)
	job := jobs.TrainingJob(xj, xj.Spec.RunMode, &xj.Spec.RunPolicy, xj.Spec.Scheduler, &xj.Status)
	for _, want := range []batchv1beta1.XGBoostReplicaType{batchv1beta1.XGBoostMaster, batchv1beta1.XGBoostWorker} {
		for i := range xj.Spec.ReplicaSpecs {
			if rs := &xj.Spec.ReplicaSpecs[i]; rs.Type == want {
				job.Replicas = append(job.Replicas, jobs.TrainingReplica(string(rs.Type), rs.Replicas, rs.RestartPolicy, &rs.Template, Container, PortName, DefaultPort))
			}
		}
	}
	for i := range xj.Spec.ReplicaSpecs {
		if rs := &xj.Spec.ReplicaSpecs[i]; rs.Type != batchv1beta1.XGBoostMaster && rs.Type != batchv1beta1.XGBoostWorker {
			job.Replicas = append(job.Replicas, jobs.TrainingReplica(string(rs.Type), rs.Replicas, rs.RestartPolicy, &rs.Template, Container, PortName, DefaultPort))
		}
	}
	return job
}

// Outcome lets the master (or, without one, worker 0) decide.
func (Kind) Outcome(job *jobs.Job, states *jobs.States) jobs.Outcome {
	if len(job.Replicas) == 0 {
		return jobs.Outcome{}
	}
	return jobs.LeaderOutcome(job, states, job.Replicas[0].Type, 0)
}

// Decorate sets, in every container, MASTER_PORT, MASTER_ADDR, WORLD_SIZE,
// RANK (workers after the master), PYTHONUNBUFFERED and, with more than one
// replica, WORKER_PORT and WORKER_ADDRS (the workers' names, comma-separated).
func (Kind) Decorate(pod *corev1.Pod, r *jobs.Replica, rank int32, job *jobs.Job) []string {
	name := job.Object.GetName()
	lead := &job.Replicas[0]
	offset := int32(0)
	for _, o := range job.Replicas {
		if o.Type == r.Type {
			break
		}
		offset += o.Replicas
	}
	vars := []corev1.EnvVar{
		{Name: "MASTER_PORT", Value: strconv.Itoa(int(lead.ServicePort()))},
		{Name: "MASTER_ADDR", Value: jobs.PodName(name, lead.Type, 0)},
		{Name: "WORLD_SIZE", Value: strconv.Itoa(int(job.Total()))},
		{Name: "RANK", Value: strconv.Itoa(int(offset + rank))},
		{Name: "PYTHONUNBUFFERED", Value: "1"},
	}
	if job.Total() > 1 {
		if w := job.Replica(string(batchv1beta1.XGBoostWorker)); w != nil {
			addrs := make([]string, 0, w.Replicas)
			for i := int32(0); i < w.Replicas; i++ {
				addrs = append(addrs, jobs.PodName(name, w.Type, i))
			}
			vars = append(vars,
				corev1.EnvVar{Name: "WORKER_PORT", Value: strconv.Itoa(int(w.ServicePort()))},
				corev1.EnvVar{Name: "WORKER_ADDRS", Value: strings.Join(addrs, ",")})
		}
	}
	jobs.SetEnvAll(pod, vars...)
	return nil
}

var specPath = field.NewPath("spec")

// Validate checks an XGBoostTrainingJob: the common shape, types master and
// worker, at most one master.
func (Kind) Validate(obj, old client.Object) field.ErrorList {
	xj := obj.(*batchv1beta1.XGBoostTrainingJob)
	errs := jobs.ValidateShape(shape(xj))
	errs = append(errs, jobs.ValidateRunPolicy(&xj.Spec.RunPolicy)...)
	for i, rs := range xj.Spec.ReplicaSpecs {
		p := specPath.Child("replicaSpecs").Index(i)
		switch rs.Type {
		case batchv1beta1.XGBoostMaster:
			if n := jobs.ReplicaCount(rs.Replicas); n > 1 {
				errs = append(errs, field.Invalid(p.Child("replicas"), n, "there can be at most one master"))
			}
		case batchv1beta1.XGBoostWorker:
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), string(rs.Type), []string{"master", "worker"}))
		}
	}
	if old != nil {
		errs = append(errs, jobs.ValidateShapeUpdate(shape(old.(*batchv1beta1.XGBoostTrainingJob)), shape(xj))...)
	}
	return errs
}

func shape(xj *batchv1beta1.XGBoostTrainingJob) jobs.Shape {
	s := jobs.Shape{Name: xj.Name, RunMode: xj.Spec.RunMode, Scheduler: xj.Spec.Scheduler}
	for _, rs := range xj.Spec.ReplicaSpecs {
		s.Types = append(s.Types, string(rs.Type))
		s.MaxReplicas = append(s.MaxReplicas, jobs.ReplicaCount(rs.Replicas))
	}
	return s
}
