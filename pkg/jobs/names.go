package jobs

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/labels"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/cacheselector"
)

// Labels the engine puts on every object of a job.
const (
	// JobNameLabel is the name of the job an object belongs to.
	JobNameLabel = batchv1beta1.JobNameLabel
	// ReplicaTypeLabel is the replica type of a pod or Service.
	ReplicaTypeLabel = batchv1beta1.ReplicaTypeLabel
	// ReplicaIndexLabel is the rank of a pod or Service within its type.
	ReplicaIndexLabel = batchv1beta1.ReplicaIndexLabel
	// ComponentLabel is the kind's component name, e.g. genericjob.
	ComponentLabel = "tensorstack.dev/component"
	// ComponentTypeLabel says whose workload a pod is: user for job pods.
	ComponentTypeLabel = "tensorstack.dev/component-type"
	// ComponentTypeUser is the ComponentTypeLabel value of job pods.
	ComponentTypeUser = "user"
	// ReplicaLabelSuffix follows the component name in the label naming a
	// pod's replica, e.g. genericjob-replica: <job>-<type>-<rank>; the
	// component name alone labels the job name.
	ReplicaLabelSuffix = "-replica"
)

// Labels and the scheduler name of the T9k Scheduler's pod contract.
const (
	// SchedulerName is the schedulerName of pods placed by the T9k Scheduler.
	SchedulerName = schedulerv1beta1.SchedulerName
	// QueueLabel names the queue of a pod.
	QueueLabel = schedulerv1beta1.QueueLabel
	// GroupNameLabel names the PodGroup of a pod.
	GroupNameLabel = schedulerv1beta1.GroupNameLabel
	// RoleLabel names the PodGroup role of a pod.
	RoleLabel = schedulerv1beta1.RoleLabel
)

// PodName returns the name of the pod (and Service) of a replica.
func PodName(job, typ string, rank int32) string {
	return fmt.Sprintf("%s-%s-%d", job, typ, rank)
}

// Labels returns the labels of every object of job of the kind component.
func Labels(component, job string) map[string]string {
	return map[string]string{
		JobNameLabel:   job,
		ComponentLabel: component,
		component:      job,
	}
}

// ReplicaLabels returns the labels of the pod and Service of one replica.
func ReplicaLabels(component, job string, r *Replica, rank int32) map[string]string {
	l := Labels(component, job)
	l[ComponentTypeLabel] = ComponentTypeUser
	l[ReplicaTypeLabel] = r.Type
	l[ReplicaIndexLabel] = strconv.Itoa(int(rank))
	l[component+ReplicaLabelSuffix] = r.PodName(job, rank)
	return l
}

// replicaSelector selects the pod of one replica, for its Service.
func replicaSelector(job, typ string, rank int32) map[string]string {
	return map[string]string{JobNameLabel: job, ReplicaTypeLabel: typ, ReplicaIndexLabel: strconv.Itoa(int(rank))}
}

// JobSelector returns the selector of a job's pods, as text.
func JobSelector(job string) string {
	return labels.SelectorFromSet(labels.Set{JobNameLabel: job}).String()
}

// CacheSelector selects the objects the engine's cache holds: those
// labelled with a job name.
func CacheSelector() labels.Selector { return cacheselector.HasLabel(JobNameLabel) }
