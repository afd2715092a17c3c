package mpijob

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobkind"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/sshjob"
)

// The replica types, container names and paths of an MPIJob.
const (
	Launcher = sshjob.Launcher
	Worker   = sshjob.Worker
	// SeedContainer is the main container of the worker layout.
	SeedContainer = "mpi-worker"
	// ConfigDir is where the launcher finds the hostfile.
	ConfigDir = "/etc/mpi"
)

// Kind is the MPIJob kind.
type Kind struct{}

var (
	_ jobs.Kind       = Kind{}
	_ jobs.Dependents = Kind{}
)

// Component is the MPIJob's label name.
func (Kind) Component() string { return "mpijob" }

// Info registers the MPIJob kind (jobkind.Info).
var Info = jobkind.T9kJob("MPIJob", "mpijobs", "mpiJob")

// Info returns the kind's registration.
func (Kind) Info() jobkind.Info { return Info }

// NewObject returns an empty MPIJob.
func (Kind) NewObject() client.Object { return &batchv1beta1.MPIJob{} }

// View returns the engine's view: the launcher, one unranked pod created
// once every worker is Ready, then the workers, each with a headless
// Service for its SSH port. The PodGroup places the workers together; the
// launcher joins it later.
func (Kind) View(obj client.Object) *jobs.Job {
	mj := obj.(*batchv1beta1.MPIJob)
	s := settingsOf(mj)
	return s.Job(mj, mj.Spec.RunMode, mj.Spec.Scheduler, &mj.Status, mj.Spec.RunPolicy.CleanUpWorkers)
}

// Outcome lets the launcher decide: the job succeeds when mpirun exits 0,
// and fails when the launcher, or a worker it needs, fails for good.
func (Kind) Outcome(job *jobs.Job, states *jobs.States) jobs.Outcome {
	return jobs.LeaderOutcome(job, states, Launcher, 0)
}

// Decorate makes a worker run sshd and the launcher run mpirun, each with
// the job's key pair, and the launcher with the hostfile.
func (Kind) Decorate(pod *corev1.Pod, r *jobs.Replica, _ int32, job *jobs.Job) []string {
	mj := job.Object.(*batchv1beta1.MPIJob)
	s := settingsOf(mj)
	c := jobs.MainContainer(&pod.Spec, r.MainContainer)
	if c == nil {
		return nil
	}
	if r.Type == Worker {
		sshjob.ServeSSH(pod, c, mj.Name, s.SSHDPath, s.AuthDir)
		jobs.SetEnv(c, "K_MPI_JOB_ROLE", Worker)
		return nil
	}
	sshjob.MountAuth(pod, c, mj.Name, s.AuthDir)
	if s.derivedLauncher {
		jobs.DropAccelerators(pod)
	}
	c.Command, c.Args = s.mpirun(), nil
	sshjob.MountConfig(pod, c, mj.Name, ConfigDir, sshjob.HostfileKey)
	rsh := "-F " + sshjob.ClientConfigPath(s.AuthDir)
	jobs.SetEnv(c, "K_MPI_JOB_ROLE", Launcher)
	jobs.SetEnv(c, "OMPI_MCA_plm_rsh_args", rsh)
	jobs.SetEnv(c, "OMPI_MCA_orte_default_hostfile", ConfigDir+"/"+sshjob.HostfileKey)
	return nil
}

// Owns returns the types of the job's key Secret and ConfigMap.
func (Kind) Owns() []client.Object { return sshjob.Owns() }

// ReconcileDependents creates the job's key Secret and keeps its ConfigMap
// (hostfile and SSH client configuration) up to date.
func (k Kind) ReconcileDependents(ctx context.Context, env *jobs.Env, job *jobs.Job) error {
	mj := job.Object.(*batchv1beta1.MPIJob)
	s := settingsOf(mj)
	hosts := make([]sshjob.Host, 0, s.Workers)
	w := job.Replica(Worker)
	for i := int32(0); i < s.Workers; i++ {
		hosts = append(hosts, sshjob.Host{Name: w.PodName(mj.Name, i), Slots: s.slots})
	}
	return sshjob.Ensure(ctx, env, job, k.Component(), map[string]string{
		sshjob.HostfileKey:  sshjob.Hostfile(hosts),
		sshjob.SSHConfigKey: sshjob.ClientConfig(s.AuthDir),
	})
}
