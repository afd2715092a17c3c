package sshjob

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// Launcher and Worker are the replica types of the kinds with a launcher.
const (
	Launcher = "launcher"
	Worker   = "worker"
)

// Layout is a job with a launcher and sshd workers, as its kind resolved
// it from either of its layouts.
type Layout struct {
	Workers                            int32
	WorkerTemplate, LauncherTemplate   *corev1.PodTemplateSpec
	WorkerContainer, LauncherContainer string
	WorkerRestart, LauncherRestart     jobs.Restart
	// SSHDPath and AuthDir are the ssh settings.
	SSHDPath, AuthDir string
	// Ports are the workers' Service ports besides SSH.
	Ports []corev1.ServicePort
}

// SetSSH sets the ssh settings of l: authDir and sshdPath as the job
// gives them, DefaultAuthMountPath and DefaultSSHDPath where it does not.
func (l *Layout) SetSSH(authDir, sshdPath string) {
	l.AuthDir, l.SSHDPath = DefaultAuthMountPath, DefaultSSHDPath
	if authDir != "" {
		l.AuthDir = authDir
	}
	if sshdPath != "" {
		l.SSHDPath = sshdPath
	}
}

// Replicas returns the engine's replicas of l: the launcher, one unranked
// pod created once every worker is Ready and kept on clean-up once ended;
// then the workers, each with a headless Service, running sshd in debug
// mode too.
func (l *Layout) Replicas() []jobs.Replica {
	return []jobs.Replica{
		{
			Type: Launcher, Replicas: 1, Restart: l.LauncherRestart,
			Template: l.LauncherTemplate, MainContainer: l.LauncherContainer,
			Unranked: true, AfterReady: []string{Worker}, KeepOnCleanUp: true,
		},
		{
			Type: Worker, Replicas: l.Workers, Restart: l.WorkerRestart,
			Template: l.WorkerTemplate, MainContainer: l.WorkerContainer,
			Service: true, Ports: append([]corev1.ServicePort{{Name: "ssh", Port: SSHPort}}, l.Ports...),
			RoleMin: l.Workers, DebugCommand: SSHDCommand(l.SSHDPath, l.AuthDir),
		},
	}
}

// Job returns the engine's view of obj laid out as l: its replicas, a
// PodGroup of the workers (the launcher joins it later) and, with
// cleanUpWorkers, the workers deleted once the job ends.
func (l *Layout) Job(obj client.Object, runMode *batchv1beta1.RunMode, scheduler *batchv1beta1.SchedulePolicy,
	status *batchv1beta1.JobStatus, cleanUpWorkers bool) *jobs.Job {
	job := &jobs.Job{Object: obj, RunMode: runMode, Scheduler: scheduler, Status: status,
		Replicas: l.Replicas(), MinMember: l.Workers}
	if cleanUpWorkers {
		job.CleanUpPolicy = batchv1beta1.CleanUpPolicyAll
	}
	return job
}

// ServeSSH makes container c of pod, of job, run sshd at sshdPath with the
// job's key pair mounted at authDir, Ready once sshd answers.
func ServeSSH(pod *corev1.Pod, c *corev1.Container, job, sshdPath, authDir string) {
	MountAuth(pod, c, job, authDir)
	c.Command, c.Args = SSHDCommand(sshdPath, authDir), nil
	ReadinessProbe(c)
}
