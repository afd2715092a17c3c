package colossalai

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/sshjob"
)

// The replica types, container names and paths of a ColossalAIJob.
const (
	Launcher = sshjob.Launcher
	Worker   = sshjob.Worker
	// ConfigDir is where the launcher finds the hostfile.
	ConfigDir = "/etc/colossalai"
	// MasterPort is torchrun's rendezvous port on worker 0.
	MasterPort = 29500
)

// settings is a ColossalAIJob in either layout, defaults applied.
type settings struct {
	sshjob.Layout
	// launcher is the launcher layout's launcher, applied to the worker
	// template; nil otherwise.
	launcher  *batchv1beta1.ColossalAILauncherSpec
	derived   bool
	procs     int32
	script    []string
	extraArgs []string
}

// settingsOf maps cj onto settings.
func settingsOf(cj *batchv1beta1.ColossalAIJob) *settings {
	s := &settings{procs: 1, Layout: sshjob.Layout{
		WorkerTemplate: &corev1.PodTemplateSpec{}, WorkerContainer: Worker,
		WorkerRestart: never, LauncherRestart: never,
		Ports: []corev1.ServicePort{{Name: "torchrun", Port: MasterPort}},
	}}
	s.SetSSH("", "")
	if ssh := cj.Spec.SSH; ssh != nil {
		s.SetSSH(ssh.AuthMountPath, ssh.SSHDPath)
	}
	if w := cj.Spec.Worker; w != nil {
		s.Workers, s.WorkerTemplate = jobs.ReplicaCount(w.Replicas), &w.Template
		s.procs = ptr.Deref(w.ProcPerWorker, 1)
		s.script, s.extraArgs = w.Command, w.TorchArgs
		s.LauncherTemplate, s.LauncherContainer, s.derived = &w.Template, Worker, true
		s.launcher = cj.Spec.Launcher
		return s
	}
	var launcher *batchv1beta1.ColossalAIReplicaSpec
	for i := range cj.Spec.ReplicaSpecs {
		rs := &cj.Spec.ReplicaSpecs[i]
		switch rs.Type {
		case batchv1beta1.ColossalAIWorker:
			s.Workers = jobs.ReplicaCount(rs.Replicas)
			if rs.Template != nil {
				s.WorkerTemplate = rs.Template
			}
		case batchv1beta1.ColossalAILauncher:
			launcher = rs
		}
	}
	s.LauncherTemplate, s.LauncherContainer, s.derived = s.WorkerTemplate, Worker, true
	if launcher != nil && launcher.Template != nil && len(launcher.Template.Spec.Containers) > 0 {
		s.LauncherTemplate, s.LauncherContainer, s.derived = launcher.Template, Launcher, false
	}
	if tc := cj.Spec.TorchConfig; tc != nil {
		s.procs = ptr.Deref(tc.ProcPerWorker, 1)
		s.script, s.extraArgs = tc.Script, tc.ExtraArgs
	}
	return s
}

// command is the launcher's command line, run without a shell: colossalai
// run with the hostfile, the processes per worker, worker 0 as torchrun's
// rendezvous, the extra arguments and the script.
func (s *settings) command(job string) []string {
	cmd := []string{"colossalai", "run",
		"--hostfile", ConfigDir + "/" + sshjob.HostfileKey,
		"--nproc_per_node", strconv.Itoa(int(s.procs)),
		"--master_addr", jobs.PodName(job, Worker, 0),
		"--master_port", strconv.Itoa(MasterPort),
	}
	cmd = append(cmd, s.extraArgs...)
	return append(cmd, s.script...)
}

// hostfile lists the workers, one name per line, as colossalai run reads
// it.
func (s *settings) hostfile(job string) string {
	var b strings.Builder
	for i := int32(0); i < s.Workers; i++ {
		b.WriteString(jobs.PodName(job, Worker, i) + "\n")
	}
	return b.String()
}
