package tensorflow

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobkind"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// Names and defaults shared with the Kubeflow training operator.
const (
	// Container is the name of the main container.
	Container = "tensorflow"
	// PortName names the port each replica serves the cluster on.
	PortName = "tfjob-port"
	// DefaultPort is that port when the template names none.
	DefaultPort = 2222
	// EnvTFConfig is the variable holding the cluster and task.
	EnvTFConfig = "TF_CONFIG"
)

// Kind is the TensorFlowTrainingJob kind.
type Kind struct{}

var (
	_ jobs.Kind       = Kind{}
	_ jobs.Dependents = Kind{}
)

// Component is the TensorFlowTrainingJob's label name.
func (Kind) Component() string { return "tensorflowtrainingjob" }

// Info registers the TensorFlowTrainingJob kind (jobkind.Info).
var Info = jobkind.T9kJob("TensorFlowTrainingJob", "tensorflowtrainingjobs", "tensorflowTrainingJob")

// Info returns the kind's registration.
func (Kind) Info() jobkind.Info { return Info }

// NewObject returns an empty TensorFlowTrainingJob.
func (Kind) NewObject() client.Object { return &batchv1beta1.TensorFlowTrainingJob{} }

// View returns the engine's view, the types in spec order.
func (Kind) View(obj client.Object) *jobs.Job {
	tj := obj.(*batchv1beta1.TensorFlowTrainingJob)
	job := jobs.TrainingJob(tj, tj.Spec.RunMode, &tj.Spec.RunPolicy, tj.Spec.Scheduler, &tj.Status.TrainingJobStatus)
	for i := range tj.Spec.ReplicaSpecs {
		rs := &tj.Spec.ReplicaSpecs[i]
		job.Replicas = append(job.Replicas, jobs.TrainingReplica(string(rs.Type), rs.Replicas, rs.RestartPolicy, &rs.Template, Container, PortName, DefaultPort))
	}
	return job
}

// leader returns the type of the replica that decides: the chief, or else
// worker 0.
func leader(job *jobs.Job) string {
	if r := job.Replica(string(batchv1beta1.TensorFlowChief)); r != nil && r.Replicas > 0 {
		return r.Type
	}
	return string(batchv1beta1.TensorFlowWorker)
}

// Outcome lets the chief, or else worker 0, decide.
func (Kind) Outcome(job *jobs.Job, states *jobs.States) jobs.Outcome {
	return jobs.LeaderOutcome(job, states, leader(job), 0)
}

// Decorate sets TF_CONFIG in every container of a distributed job (more than
// one replica).
func (Kind) Decorate(pod *corev1.Pod, r *jobs.Replica, rank int32, job *jobs.Job) []string {
	if job.Total() == 1 {
		return nil
	}
	tj := job.Object.(*batchv1beta1.TensorFlowTrainingJob)
	jobs.SetEnvAll(pod, corev1.EnvVar{Name: EnvTFConfig, Value: TFConfig(job, r.Type, rank, tj.Spec.EnableDynamicWorker)})
	return nil
}

// Owns returns the type of the job's TensorBoard.
func (Kind) Owns() []client.Object { return []client.Object{&tensorstackv1beta1.TensorBoard{}} }

// ReconcileDependents creates the job's TensorBoard when tensorboardSpec is
// set.
func (k Kind) ReconcileDependents(ctx context.Context, env *jobs.Env, job *jobs.Job) error {
	tj := job.Object.(*batchv1beta1.TensorFlowTrainingJob)
	if tj.Spec.TensorboardSpec == nil {
		tj.Status.Tensorboard = nil
		return nil
	}
	st, err := jobs.EnsureTensorBoard(ctx, env, job, k.Component(), tj.Spec.TensorboardSpec)
	if err != nil {
		return err
	}
	tj.Status.Tensorboard = st
	return nil
}

var specPath = field.NewPath("spec")

// Validate checks a TensorFlowTrainingJob: the common shape, types among
// chief, worker, ps and evaluator, at most one chief, and a chief or worker
// to lead.
func (Kind) Validate(obj, old client.Object) field.ErrorList {
	tj := obj.(*batchv1beta1.TensorFlowTrainingJob)
	errs := jobs.ValidateShape(shape(tj))
	errs = append(errs, jobs.ValidateRunPolicy(&tj.Spec.RunPolicy)...)
	var oldTB *tensorstackv1beta1.TensorBoardSpec
	if old != nil {
		oldTB = old.(*batchv1beta1.TensorFlowTrainingJob).Spec.TensorboardSpec
	}
	errs = append(errs, jobs.ValidateTensorBoard(tj.Spec.TensorboardSpec, oldTB)...)
	allowed := []string{"chief", "worker", "ps", "evaluator"}
	leads := false
	for i, rs := range tj.Spec.ReplicaSpecs {
		p := specPath.Child("replicaSpecs").Index(i)
		n := jobs.ReplicaCount(rs.Replicas)
		switch rs.Type {
		case batchv1beta1.TensorFlowChief:
			if n > 1 {
				errs = append(errs, field.Invalid(p.Child("replicas"), n, "there can be at most one chief"))
			}
			leads = leads || n > 0
		case batchv1beta1.TensorFlowWorker:
			leads = leads || n > 0
		case batchv1beta1.TensorFlowPS, batchv1beta1.TensorFlowEvaluator:
		default:
			errs = append(errs, field.NotSupported(p.Child("type"), string(rs.Type), allowed))
		}
	}
	if !leads && len(tj.Spec.ReplicaSpecs) > 0 {
		errs = append(errs, field.Required(specPath.Child("replicaSpecs"), "a chief or at least one worker is needed to lead the job"))
	}
	if old != nil {
		errs = append(errs, jobs.ValidateShapeUpdate(shape(old.(*batchv1beta1.TensorFlowTrainingJob)), shape(tj))...)
	}
	return errs
}

func shape(tj *batchv1beta1.TensorFlowTrainingJob) jobs.Shape {
	s := jobs.Shape{Name: tj.Name, RunMode: tj.Spec.RunMode, Scheduler: tj.Spec.Scheduler}
	for _, rs := range tj.Spec.ReplicaSpecs {
		s.Types = append(s.Types, string(rs.Type))
		s.MaxReplicas = append(s.MaxReplicas, jobs.ReplicaCount(rs.Replicas))
	}
	return s
}

// address returns the cluster address of replica typ rank.
func address(job *jobs.Job, r *jobs.Replica, rank int32) string {
	return jobs.PodName(job.Object.GetName(), r.Type, rank) + "." + job.Object.GetNamespace() + ".svc:" + strconv.Itoa(int(r.ServicePort()))
}
