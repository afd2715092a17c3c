package mpijob

import (
	"path"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/sshjob"
)

// settings is an MPIJob in either layout, defaults applied.
type settings struct {
	sshjob.Layout
	// derivedLauncher is set when the launcher's template is the workers'.
	derivedLauncher bool
	home            string
	mca             map[string]string
	extraArgs       []string
	script          []string
	slots           int32
	// recovery is set when mpirun restarts failed processes, up to
	// maxRestarts times each.
	recovery    bool
	maxRestarts int32
}

// defaultMaxRestarts is how often mpirun restarts a failed process when
// processRecovery sets no limit.
const defaultMaxRestarts = 3

// never is the restart rule of the worker layout: pods are not recreated
// (mpirun's own --enable-recovery restarts processes).
var never = jobs.Restart{Policy: batchv1beta1.ReplicaRestartNever}

// settingsOf maps mj onto settings.
func settingsOf(mj *batchv1beta1.MPIJob) *settings {
	s := &settings{}
	s.SetSSH("", "")
	if ssh := mj.Spec.SSH; ssh != nil {
		s.SetSSH(ssh.SSHAuthMountPath, ssh.SSHDPath)
	}
	if w := mj.Spec.Worker; w != nil {
		s.Workers = jobs.ReplicaCount(w.Replicas)
		s.WorkerTemplate, s.WorkerContainer = &w.Template, SeedContainer
		s.LauncherTemplate, s.LauncherContainer = &w.Template, SeedContainer
		s.WorkerRestart, s.LauncherRestart = never, never
		s.derivedLauncher = true
		s.home, s.mca, s.extraArgs, s.script = mj.Spec.MPIHome, mj.Spec.MCA, w.ExtraMPIArgs, w.Cmd
		if r := w.ProcessRecovery; r != nil && r.Enable {
			s.recovery, s.maxRestarts = true, defaultMaxRestarts
			if r.Limit != nil {
				s.maxRestarts = *r.Limit
			}
		}
	} else {
		s.WorkerTemplate, s.WorkerContainer = &corev1.PodTemplateSpec{}, Worker
		s.WorkerRestart, s.LauncherRestart = never, never
		var launcher *batchv1beta1.MPIReplicaSpec
		for i := range mj.Spec.ReplicaSpecs {
			rs := &mj.Spec.ReplicaSpecs[i]
			switch rs.Type {
			case batchv1beta1.MPIWorker:
				s.Workers = jobs.ReplicaCount(rs.Replicas)
				s.WorkerRestart = jobs.RestartOf(rs.RestartPolicy)
				if rs.Template != nil {
					s.WorkerTemplate = rs.Template
				}
			case batchv1beta1.MPILauncher:
				launcher = rs
			}
		}
		s.LauncherTemplate, s.LauncherContainer, s.derivedLauncher = s.WorkerTemplate, Worker, true
		if launcher != nil {
			s.LauncherRestart = jobs.RestartOf(launcher.RestartPolicy)
			if t := launcher.Template; t != nil && len(t.Spec.Containers) > 0 {
				s.LauncherTemplate, s.LauncherContainer, s.derivedLauncher = t, Launcher, false
			}
		}
		if c := mj.Spec.MPIConfig; c != nil {
			s.home, s.mca, s.extraArgs, s.script = c.Home, c.MCA, c.ExtraArgs, c.Script
		}
	}
	s.slots = slotsOf(jobs.MainContainer(&s.WorkerTemplate.Spec, s.WorkerContainer))
	if w := mj.Spec.Worker; w != nil && w.ProcessesPerWorker != nil {
		s.slots = *w.ProcessesPerWorker
	}
	s.slots = max(s.slots, perNode(s.extraArgs))
	return s
}

// mpirun is the launcher's command line: mpirun (from home when set) with
// --prefix, the hostfile, process recovery, the MCA parameters in key
// order, the extra arguments and the script. It is run without a shell.
func (s *settings) mpirun() []string {
	cmd := []string{"mpirun"}
	if s.home != "" {
		cmd = []string{path.Join(s.home, "bin", "mpirun"), "--prefix", s.home}
	}
	cmd = append(cmd, "--hostfile", ConfigDir+"/"+sshjob.HostfileKey)
	if s.recovery {
		cmd = append(cmd, "--enable-recovery", "--max-restarts", strconv.Itoa(int(s.maxRestarts)))
	}
	keys := make([]string, 0, len(s.mca))
	for k := range s.mca {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd = append(cmd, "--mca", k, s.mca[k])
	}
	cmd = append(cmd, s.extraArgs...)
	return append(cmd, s.script...)
}

// slotsOf is the slots of a worker whose main container is c: its
// accelerators if it requests any, else its whole CPUs, at least 1.
func slotsOf(c *corev1.Container) int32 {
	if c == nil {
		return 1
	}
	var accel int64
	for name, q := range c.Resources.Limits {
		if accelerator.IsAccelerator(string(name)) {
			accel += q.Value()
		}
	}
	if accel > 0 {
		return int32(accel)
	}
	cpu, ok := c.Resources.Limits[corev1.ResourceCPU]
	if !ok {
		cpu, ok = c.Resources.Requests[corev1.ResourceCPU]
	}
	if ok && cpu.Value() > 1 {
		return int32(cpu.MilliValue() / 1000)
	}
	return 1
}

// perNode is the processes per node that mpirun's -N or --npernode in args
// asks for, 0 if none: the hostfile then offers at least that many slots.
func perNode(args []string) int32 {
	for i, a := range args {
		if (a == "-N" || a == "--npernode" || a == "-npernode") && i+1 < len(args) {
			if n, err := strconv.Atoi(args[i+1]); err == nil && n > 0 {
				return int32(n)
			}
		}
	}
	return 0
}
