package pytorch

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/jobkind"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// Names and defaults shared with the Kubeflow training operator.
const (
	// Container is the name of the main container.
	Container = "pytorch"
	// PortName names the port the master listens on.
	PortName = "pytorchjob-port"
	// DefaultPort is the master's port when the template names none.
	DefaultPort = 23456
	// MasterType is the replica type that leads when present.
	MasterType = "master"
	// WorkerType is the type that scales by default under elastic training.
	WorkerType = "worker"
)

// Kind is the PyTorchTrainingJob kind.
type Kind struct{}

var (
	_ jobs.Kind           = Kind{}
	_ jobs.Dependents     = Kind{}
	_ jobs.StatusReporter = Kind{}
)

// Component is the PyTorchTrainingJob's label name.
func (Kind) Component() string { return "pytorchtrainingjob" }

// Info registers the PyTorchTrainingJob kind (jobkind.Info).
var Info = jobkind.T9kJob("PyTorchTrainingJob", "pytorchtrainingjobs", "pytorchTrainingJob")

// Info returns the kind's registration.
func (Kind) Info() jobkind.Info { return Info }

// NewObject returns an empty PyTorchTrainingJob.
func (Kind) NewObject() client.Object { return &batchv1beta1.PyTorchTrainingJob{} }

// View returns the engine's view: the master type first, then the others in
// spec order; under elastic training the counts follow
// elastic.expectedReplicas.
func (Kind) View(obj client.Object) *jobs.Job {
	pj := obj.(*batchv1beta1.PyTorchTrainingJob)
	job := jobs.TrainingJob(pj, pj.Spec.RunMode, &pj.Spec.RunPolicy, pj.Spec.Scheduler, &pj.Status.TrainingJobStatus)
	for _, i := range order(pj) {
		rs := &pj.Spec.ReplicaSpecs[i]
		job.Replicas = append(job.Replicas, jobs.TrainingReplica(rs.Type, rs.Replicas, rs.RestartPolicy, &rs.Template, Container, PortName, DefaultPort))
	}
	if e := elasticOf(pj); e != nil {
		counts, mins := e.counts(pj)
		for i := range job.Replicas {
			job.Replicas[i].Replicas = counts[job.Replicas[i].Type]
			job.Replicas[i].RoleMin = mins[job.Replicas[i].Type]
		}
		job.MinMember = e.min
	}
	return job
}

// order returns the indexes of the replica types, the master type first.
func order(pj *batchv1beta1.PyTorchTrainingJob) []int {
	var out []int
	for i, rs := range pj.Spec.ReplicaSpecs {
		if rs.Type == MasterType {
			out = append(out, i)
		}
	}
	for i, rs := range pj.Spec.ReplicaSpecs {
		if rs.Type != MasterType {
			out = append(out, i)
		}
	}
	return out
}

// Outcome lets the master (rank 0 of the first type) decide.
func (Kind) Outcome(job *jobs.Job, states *jobs.States) jobs.Outcome {
	if len(job.Replicas) == 0 {
		return jobs.Outcome{}
	}
	return jobs.LeaderOutcome(job, states, job.Replicas[0].Type, 0)
}

// Owns returns the type of the job's TensorBoard.
func (Kind) Owns() []client.Object { return []client.Object{&tensorstackv1beta1.TensorBoard{}} }

// ReconcileDependents creates the job's TensorBoard when tensorboardSpec is
// set.
func (k Kind) ReconcileDependents(ctx context.Context, env *jobs.Env, job *jobs.Job) error {
	pj := job.Object.(*batchv1beta1.PyTorchTrainingJob)
	if pj.Spec.TensorboardSpec == nil {
		pj.Status.Tensorboard = nil
		return nil
	}
	st, err := jobs.EnsureTensorBoard(ctx, env, job, k.Component(), pj.Spec.TensorboardSpec)
	if err != nil {
		return err
	}
	pj.Status.Tensorboard = st
	return nil
}

// ReportStatus reports the size of an elastic training.
func (Kind) ReportStatus(job *jobs.Job, pods []*corev1.Pod) {
	pj := job.Object.(*batchv1beta1.PyTorchTrainingJob)
	if pj.Spec.Elastic == nil {
		pj.Status.Elastic = nil
		return
	}
	n := int32(0)
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	pj.Status.Elastic = &batchv1beta1.ElasticStatus{CurrentReplicas: n, Selector: jobs.JobSelector(pj.Name)}
}

// nproc returns the number of training processes per replica of r, or 0 for
// torchrun's own choice (cpu, auto).
func nproc(pj *batchv1beta1.PyTorchTrainingJob, r *jobs.Replica) int {
	tc := pj.Spec.TorchrunConfig
	if tc == nil || !tc.Enabled {
		return 1
	}
	switch tc.ProcPerNode {
	case "", "1":
		return 1
	case "gpu":
		if c := jobs.MainContainer(&r.Template.Spec, Container); c != nil {
			if q, ok := c.Resources.Limits[accelerator.NVIDIAGPU]; ok && q.Value() > 0 {
				return int(q.Value())
			}
		}
		return 1
	case "cpu", "auto":
		return 0
	}
	n, err := strconv.Atoi(tc.ProcPerNode)
	if err != nil || n < 1 {
		return 1
	}
	return n
}
