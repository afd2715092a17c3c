// Package jobkind is the record each job kind registers once: its API kind
// and resource, whether the queue admission webhook checks it, the
// workflow step that runs it, and where the workload metrics read its
// phase. It imports nothing of the project and no controller, so that
// what must list every job kind (the webhook configurations, the project
// roles, the controllers' RBAC, the workload metrics and their alert
// rules, the workflow tables) is built from one list, or checked against
// it by a test: pkg/jobs/kinds.Registered.
package jobkind

import "k8s.io/apimachinery/pkg/runtime/schema"

// Info is what the platform knows of a job kind apart from how it runs.
type Info struct {
	// GVK is the kind.
	GVK schema.GroupVersionKind
	// Resource is the kind's plural resource name.
	Resource string
	// Engine is true for the kinds the jobs engine (pkg/jobs) reconciles,
	// each validated by the webhook at the engine's ValidatePath.
	Engine bool
	// QueueMatch is the CEL expression, over the object being created,
	// that is true when the job asks a queue of the T9k Scheduler for its
	// pods; the queue admission webhook then refuses a job its queue would
	// not take. Empty when the webhook does not check the kind's jobs (the
	// pod webhook and the scheduler still hold its pods to their queue).
	QueueMatch string
	// WorkflowField is the WorkflowTemplate spec field of a step that runs
	// a job of the kind (the step's type is the kind's name); empty when
	// no workflow step runs the kind.
	WorkflowField string
	// PhasePath is the field holding the job's phase, which the workload
	// metrics export; nil leaves the kind out of them.
	PhasePath []string
	// PausedPath is a boolean field that is true while the job is paused;
	// nil means none.
	PausedPath []string
}

// GroupResource is the kind's API group and resource.
func (i Info) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: i.GVK.Group, Resource: i.Resource}
}

// T9kSchedulerMatch is the QueueMatch of the kinds whose spec.scheduler
// names the T9k Scheduler and its queue (the T9k Jobs).
const T9kSchedulerMatch = "has(object.spec.scheduler) && has(object.spec.scheduler.t9kScheduler)"

// T9kJob returns the Info of a T9k Job kind of batch.tensorstack.dev/v1beta1
// that the jobs engine runs: queue-admitted by spec.scheduler, with its
// phase in status.phase and spec.runMode.pause.enabled while paused.
// workflowField is the WorkflowTemplate field of its step.
func T9kJob(kind, resource, workflowField string) Info {
	return Info{
		GVK:           schema.GroupVersionKind{Group: "batch.tensorstack.dev", Version: "v1beta1", Kind: kind},
		Resource:      resource,
		Engine:        true,
		QueueMatch:    T9kSchedulerMatch,
		WorkflowField: workflowField,
		PhasePath:     []string{"status", "phase"},
		PausedPath:    []string{"spec", "runMode", "pause", "enabled"},
	}
}
