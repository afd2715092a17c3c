package colossalai

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobkind"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/sshjob"
)

// Kind is the ColossalAIJob kind.
type Kind struct{}

var (
	_ jobs.Kind       = Kind{}
	_ jobs.Dependents = Kind{}
)

// never is the restart rule of every ColossalAIJob pod.
var never = jobs.Restart{Policy: batchv1beta1.ReplicaRestartNever}

// Component is the ColossalAIJob's label name.
func (Kind) Component() string { return "colossalaijob" }

// Info registers the ColossalAIJob kind (jobkind.Info).
var Info = jobkind.T9kJob("ColossalAIJob", "colossalaijobs", "colossalaiJob")

// Info returns the kind's registration.
func (Kind) Info() jobkind.Info { return Info }

// NewObject returns an empty ColossalAIJob.
func (Kind) NewObject() client.Object { return &batchv1beta1.ColossalAIJob{} }

// View returns the engine's view: the launcher, one unranked pod created
// once every worker is Ready, then the workers, each with a headless
// Service. Nothing is recreated.
func (Kind) View(obj client.Object) *jobs.Job {
	cj := obj.(*batchv1beta1.ColossalAIJob)
	s := settingsOf(cj)
	return s.Job(cj, cj.Spec.RunMode, cj.Spec.Scheduler, &cj.Status, cj.Spec.RunPolicy.CleanUpWorkers)
}

// Outcome lets the launcher decide: the job succeeds when colossalai run
// exits 0 and fails when the launcher or a worker fails.
func (Kind) Outcome(job *jobs.Job, states *jobs.States) jobs.Outcome {
	return jobs.LeaderOutcome(job, states, Launcher, 0)
}

// Decorate makes a worker run sshd and the launcher run colossalai run,
// each with the job's key pair, and the launcher with the hostfile.
func (Kind) Decorate(pod *corev1.Pod, r *jobs.Replica, _ int32, job *jobs.Job) []string {
	cj := job.Object.(*batchv1beta1.ColossalAIJob)
	s := settingsOf(cj)
	c := jobs.MainContainer(&pod.Spec, r.MainContainer)
	if c == nil {
		return nil
	}
	if r.Type == Worker {
		sshjob.ServeSSH(pod, c, cj.Name, s.SSHDPath, s.AuthDir)
		return nil
	}
	sshjob.MountAuth(pod, c, cj.Name, s.AuthDir)
	if l := s.launcher; l != nil {
		if l.Image != "" {
			c.Image = l.Image
		}
		if l.WorkingDir != "" {
			c.WorkingDir = l.WorkingDir
		}
		c.Env = append(c.Env, l.Env...)
		c.Resources = *l.Resources.DeepCopy()
	}
	if s.derived {
		c.ReadinessProbe = nil
		if s.launcher == nil {
			jobs.DropAccelerators(pod)
		}
	}
	c.Command, c.Args = s.command(cj.Name), nil
	sshjob.MountConfig(pod, c, cj.Name, ConfigDir, sshjob.HostfileKey)
	return nil
}

// Owns returns the types of the job's key Secret and ConfigMap.
func (Kind) Owns() []client.Object { return sshjob.Owns() }

// ReconcileDependents creates the job's key Secret and keeps its ConfigMap
// (hostfile and SSH client configuration) up to date.
func (k Kind) ReconcileDependents(ctx context.Context, env *jobs.Env, job *jobs.Job) error {
	cj := job.Object.(*batchv1beta1.ColossalAIJob)
	s := settingsOf(cj)
	return sshjob.Ensure(ctx, env, job, k.Component(), map[string]string{
		sshjob.HostfileKey:  s.hostfile(cj.Name),
		sshjob.SSHConfigKey: sshjob.ClientConfig(s.AuthDir),
	})
}
