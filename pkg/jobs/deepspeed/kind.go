package deepspeed

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobkind"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/sshjob"
)

// Names and paths of a DeepSpeedJob.
const (
	// Worker is the replica type.
	Worker = "worker"
	// Container is the main container's name.
	Container = "worker"
	// ConfigDir holds the hostfile and the env file; it is where the
	// deepspeed launcher looks for a hostfile by default.
	ConfigDir = "/job"
	// EnvFileKey is the env file's name, DeepSpeed's.
	EnvFileKey = ".deepspeed_env"
)

// Kind is the DeepSpeedJob kind.
type Kind struct{}

var (
	_ jobs.Kind       = Kind{}
	_ jobs.Dependents = Kind{}
)

// Component is the DeepSpeedJob's label name.
func (Kind) Component() string { return "deepspeedjob" }

// Info registers the DeepSpeedJob kind (jobkind.Info).
var Info = jobkind.T9kJob("DeepSpeedJob", "deepspeedjobs", "deepspeedJob")

// Info returns the kind's registration.
func (Kind) Info() jobkind.Info { return Info }

// NewObject returns an empty DeepSpeedJob.
func (Kind) NewObject() client.Object { return &batchv1beta1.DeepSpeedJob{} }

// View returns the engine's view: the workers, with a headless Service each
// for sshd; with elastic, as many as expectedReplicas within its bounds,
// and a PodGroup of minReplicas.
func (Kind) View(obj client.Object) *jobs.Job {
	dj := obj.(*batchv1beta1.DeepSpeedJob)
	job := jobs.TrainingJob(dj, dj.Spec.RunMode, &dj.Spec.RunPolicy, dj.Spec.Scheduler, &dj.Status)
	w := &dj.Spec.Worker
	rep := jobs.TrainingReplica(Worker, w.Replicas, w.RestartPolicy, &w.Template, Container, "ssh", sshjob.SSHPort)
	rep.DebugCommand = sshjob.SSHDCommand(sshjob.DefaultSSHDPath, sshjob.DefaultAuthMountPath)
	if lo, hi, want, ok := elastic(dj); ok {
		rep.Replicas = min(max(want, lo), hi)
		rep.RoleMin, job.MinMember = lo, lo
	}
	job.Replicas = []jobs.Replica{rep}
	return job
}

// elastic returns the bounds and expected size of an elastic job.
func elastic(dj *batchv1beta1.DeepSpeedJob) (lo, hi, want int32, ok bool) {
	e := dj.Spec.Elastic
	if e == nil || !e.Enabled {
		return 0, 0, 0, false
	}
	n := jobs.ReplicaCount(dj.Spec.Worker.Replicas)
	lo = ptr.Deref(e.MinReplicas, 1)
	hi = max(ptr.Deref(e.MaxReplicas, n), lo)
	return lo, hi, ptr.Deref(e.ExpectedReplicas, n), true
}

// Outcome lets worker 0, which runs the launcher, decide.
func (Kind) Outcome(job *jobs.Job, states *jobs.States) jobs.Outcome {
	return jobs.LeaderOutcome(job, states, Worker, 0)
}

// slots returns slotsPerWorker (or the manual's slotPerWorker), 1 unless
// set.
func slots(dj *batchv1beta1.DeepSpeedJob) int32 {
	c := dj.Spec.Config
	return ptr.Deref(c.SlotsPerWorker, ptr.Deref(c.SlotPerWorker, 1))
}

// Decorate makes every worker run sshd with the job's key pair, hostfile
// and env file, and worker 0 also the launcher.
func (Kind) Decorate(pod *corev1.Pod, r *jobs.Replica, rank int32, job *jobs.Job) []string {
	dj := job.Object.(*batchv1beta1.DeepSpeedJob)
	c := jobs.MainContainer(&pod.Spec, r.MainContainer)
	if c == nil {
		return nil
	}
	auth := sshjob.DefaultAuthMountPath
	keys := []string{sshjob.HostfileKey}
	if !dj.Spec.DisableCustomEnv {
		keys = append(keys, EnvFileKey)
		jobs.SetEnv(c, "DS_ENV_FILE", ConfigDir+"/"+EnvFileKey)
	}
	sshjob.MountConfig(pod, c, dj.Name, ConfigDir, keys...)
	jobs.SetEnv(c, "PDSH_RCMD_TYPE", "ssh")
	jobs.SetEnv(c, "PDSH_SSH_ARGS_APPEND", "-F "+sshjob.ClientConfigPath(auth))
	jobs.SetEnv(c, "WORLD_SIZE", strconv.Itoa(int(r.Replicas*slots(dj))))
	if rank != 0 {
		sshjob.ServeSSH(pod, c, dj.Name, sshjob.DefaultSSHDPath, auth)
		return nil
	}
	sshjob.ServeSSH(pod, c, dj.Name, sshjob.DefaultSSHDPath, auth)
	c.Command = launchCommand(dj, auth) // sshd in the background, then the launcher
	return nil
}

// Owns returns the types of the job's key Secret and ConfigMap.
func (Kind) Owns() []client.Object { return sshjob.Owns() }

// ReconcileDependents creates the job's key Secret and keeps its ConfigMap
// (hostfile, env file, SSH client configuration) up to date.
func (k Kind) ReconcileDependents(ctx context.Context, env *jobs.Env, job *jobs.Job) error {
	dj := job.Object.(*batchv1beta1.DeepSpeedJob)
	rep := &job.Replicas[0]
	hosts := make([]sshjob.Host, 0, rep.Replicas)
	for i := int32(0); i < rep.Replicas; i++ {
		hosts = append(hosts, sshjob.Host{Name: rep.PodName(dj.Name, i), Slots: slots(dj)})
	}
	data := map[string]string{
		sshjob.HostfileKey:  sshjob.Hostfile(hosts),
		sshjob.SSHConfigKey: sshjob.ClientConfig(sshjob.DefaultAuthMountPath),
	}
	if !dj.Spec.DisableCustomEnv {
		data[EnvFileKey] = envFile(jobs.MainContainer(&rep.Template.Spec, Container))
	}
	return sshjob.Ensure(ctx, env, job, k.Component(), data)
}
