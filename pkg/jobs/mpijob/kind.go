package mpijob

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/sshjob"
)

// The replica types, container names and paths of an MPIJob.
const (
	Launcher = string(batchv1beta1.MPILauncher)
	Worker   = string(batchv1beta1.MPIWorker)
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

// NewObject returns an empty MPIJob.
func (Kind) NewObject() client.Object { return &batchv1beta1.MPIJob{} }

// View returns the engine's view: the launcher, one unranked pod created
// once every worker is Ready, then the workers, each with a headless
// Service for its SSH port. The PodGroup places the workers together; the
// launcher joins it later.
func (Kind) View(obj client.Object) *jobs.Job {
	mj := obj.(*batchv1beta1.MPIJob)
	s := settingsOf(mj)
	job := &jobs.Job{
		Object:    mj,
		RunMode:   mj.Spec.RunMode,
		Scheduler: mj.Spec.Scheduler,
		Status:    &mj.Status,
	}
	if mj.Spec.RunPolicy.CleanUpWorkers {
		job.CleanUpPolicy = batchv1beta1.CleanUpPolicyAll
	}
	workers := jobs.Replica{
		Type:          Worker,
		Replicas:      s.workers,
		Restart:       s.workerRestart,
		Template:      s.workerTemplate,
		MainContainer: s.workerContainer,
		Service:       true,
		Ports:         []corev1.ServicePort{{Name: "ssh", Port: sshjob.SSHPort}},
		RoleMin:       s.workers,
		DebugCommand:  sshjob.SSHDCommand(s.sshdPath, s.authDir),
	}
	launcher := jobs.Replica{
		Type:          Launcher,
		Replicas:      1,
		Restart:       s.launcherRestart,
		Template:      s.launcherTemplate,
		MainContainer: s.launcherContainer,
		Unranked:      true,
		AfterReady:    []string{Worker},
		KeepOnCleanUp: true,
	}
	job.Replicas = []jobs.Replica{launcher, workers}
	job.MinMember = s.workers
	return job
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
	sshjob.MountAuth(pod, c, mj.Name, s.authDir)
	if r.Type == Worker {
		c.Command, c.Args = sshjob.SSHDCommand(s.sshdPath, s.authDir), nil
		sshjob.ReadinessProbe(c)
		jobs.SetEnv(c, "K_MPI_JOB_ROLE", Worker)
		return nil
	}
	if s.derivedLauncher {
		jobs.DropAccelerators(pod)
	}
	c.Command, c.Args = s.mpirun(), nil
	sshjob.MountConfig(pod, c, mj.Name, ConfigDir, sshjob.HostfileKey)
	rsh := "-F " + sshjob.ClientConfigPath(s.authDir)
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
	hosts := make([]sshjob.Host, 0, s.workers)
	w := job.Replica(Worker)
	for i := int32(0); i < s.workers; i++ {
		hosts = append(hosts, sshjob.Host{Name: w.PodName(mj.Name, i), Slots: s.slots})
	}
	return sshjob.Ensure(ctx, env, job, k.Component(), map[string]string{
		sshjob.HostfileKey:  sshjob.Hostfile(hosts),
		sshjob.SSHConfigKey: sshjob.ClientConfig(s.authDir),
	})
}
