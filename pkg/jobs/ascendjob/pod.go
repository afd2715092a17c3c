package ascendjob

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	mindxdlv1 "github.com/accelstack/accelstack/api/mindxdl/v1"
	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/ranktable"
)

// Pod labels and annotations of ascend-operator (Kubeflow's common labels).
const (
	OperatorNameLabel     = "training.kubeflow.org/operator-name"
	OperatorName          = "ascendjob-controller"
	GroupNameLabel        = "group-name"
	JobNameLabel          = "training.kubeflow.org/job-name"
	ShortJobNameLabel     = "job-name"
	ReplicaTypeLabel      = "training.kubeflow.org/replica-type"
	ShortReplicaTypeLabel = "replica-type"
	ReplicaIndexLabel     = "training.kubeflow.org/replica-index"
	ShortReplicaIndex     = "replica-index"
	JobRoleLabel          = "training.kubeflow.org/job-role"
	VersionLabel          = "version"
	// RankTableVolume names the template volume that asks for the rank
	// table as a file.
	RankTableVolume = "ranktable"
)

// podLabels returns the labels that select the pod of type typ, rank rank.
func podLabels(job string, typ mindxdlv1.ReplicaType, rank int32) map[string]string {
	t, r := engineType(typ), strconv.Itoa(int(rank))
	return map[string]string{
		OperatorNameLabel: OperatorName, GroupNameLabel: mindxdlv1.GroupVersion.Group,
		JobNameLabel: job, ShortJobNameLabel: job,
		ReplicaTypeLabel: t, ShortReplicaTypeLabel: t,
		ReplicaIndexLabel: r, ShortReplicaIndex: r,
	}
}

// Decorate sets what ascend-operator sets in the pod of replica r, rank
// rank: its labels and rank annotation, the scheduler the job names, the
// leader's port, the rank table in place of the ranktable volume, and the
// variables of the container ascend.
func (Kind) Decorate(pod *corev1.Pod, r *jobs.Replica, rank int32, job *jobs.Job) []string {
	aj := job.Object.(*mindxdlv1.AscendJob)
	typ := canonical(mindxdlv1.ReplicaType(r.Type))
	for k, v := range podLabels(aj.Name, typ, rank) {
		pod.Labels[k] = v
	}
	if isLeader(typ) {
		pod.Labels[JobRoleLabel] = "master"
	}
	pod.Labels[VersionLabel] = strconv.Itoa(int(aj.Status.Detail.BackoffCount))
	t := topologyOf(aj)
	frank := t.rank(typ, rank)
	if _, n := npuRequest(r.Template); n > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[ranktable.RankIndexAnnotation] = strconv.Itoa(frank)
	}
	if pod.Spec.SchedulerName == "" && aj.Spec.SchedulerName != "" {
		pod.Spec.SchedulerName = aj.Spec.SchedulerName
	}
	mountRankTable(pod, aj.Name)

	c := mainContainer(&pod.Spec)
	if c == nil {
		return nil
	}
	if isLeader(typ) && jobs.ContainerPort(c, PortName, -1) < 0 {
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: PortName, ContainerPort: DefaultPort})
	}
	addr, port := jobs.PodName(aj.Name, engineType(t.leader), 0), int32(DefaultPort)
	if l := aj.Status.Leader; l != nil {
		addr, port = l.ClusterIP, l.Port
	}
	setVars(c, commonEnv(aj, c, pod.Spec.HostNetwork, typ, frank))
	setVars(c, t.frameworkEnv(typ, frank, addr, port))
	return nil
}

// mountRankTable serves the rank table of pkg/ranktable, the ConfigMap
// rings-config-<job>, in place of the pod's ranktable volume (the file-based
// launch). The engine mounts that ConfigMap at ranktable.MountPath in the
// containers requesting Ascend 910 chips; their own mounts at that path
// give way.
func mountRankTable(pod *corev1.Pod, job string) {
	found := false
	for i := range pod.Spec.Volumes {
		if v := &pod.Spec.Volumes[i]; v.Name == RankTableVolume {
			v.VolumeSource = corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: ranktable.ConfigMapPrefix + job}}}
			found = true
		}
	}
	if !found {
		return
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if !requestsAscend910(c) {
			continue
		}
		kept := c.VolumeMounts[:0]
		for _, m := range c.VolumeMounts {
			if m.MountPath != ranktable.MountPath {
				kept = append(kept, m)
			}
		}
		c.VolumeMounts = kept
	}
}

// requestsAscend910 reports whether c requests the chips the engine mounts
// the rank table for.
func requestsAscend910(c *corev1.Container) bool {
	q, ok := c.Resources.Limits[accelerator.Ascend910]
	if !ok {
		q, ok = c.Resources.Requests[accelerator.Ascend910]
	}
	return ok && !q.IsZero()
}
