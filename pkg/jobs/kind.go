package jobs

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobkind"
)

// Kind is what a job kind supplies to the engine. Its methods must not
// change the object they are given, except through the Job view's status
// pointers.
type Kind interface {
	// Component is the kind's name in labels: the tensorstack.dev/component
	// value and the prefix of the per-kind job labels, e.g. "genericjob".
	Component() string
	// Info is the kind's registration: its API kind and resource, queue
	// admission, workflow step and metrics (package jobkind).
	Info() jobkind.Info
	// NewObject returns an empty job of the kind.
	NewObject() client.Object
	// View returns the kind-neutral view of obj, with its replica types in
	// rank order and status pointers into obj.
	View(obj client.Object) *Job
	// Validate reports what in obj cannot run, naming the fields; old is the
	// version being replaced on update, else nil.
	Validate(obj, old client.Object) field.ErrorList
	// Decorate sets what the kind adds to the pod of replica r, rank rank:
	// environment, command rewriting. It returns notes worth an event, such
	// as variables it could not substitute.
	Decorate(pod *corev1.Pod, r *Replica, rank int32, job *Job) []string
	// Outcome says whether the job has finished, given its replicas' states.
	Outcome(job *Job, states *States) Outcome
}

// Dependents is implemented by kinds that own objects besides pods,
// Services and the PodGroup, such as a TensorBoard.
type Dependents interface {
	// Owns lists the types of the dependents, watched in the engine's cache;
	// dependents must carry the job's labels (Labels).
	Owns() []client.Object
	// ReconcileDependents creates or updates the dependents of a running or
	// finished job and reports them in its status.
	ReconcileDependents(ctx context.Context, env *Env, job *Job) error
}

// StatusReporter is implemented by kinds with status fields of their own,
// filled from the job's pods before the status is written.
type StatusReporter interface {
	ReportStatus(job *Job, pods []*corev1.Pod)
}

// Env is what the engine lends a kind's hooks.
type Env struct {
	// Client writes, and reads what the cache does not hold.
	Client client.Client
	// Cache holds the objects labelled with a job name (pods, Services and
	// the kinds' dependents).
	Cache client.Reader
	// Recorder records events about jobs.
	Recorder events.EventRecorder
	// Scheme knows every API type.
	Scheme *runtime.Scheme
}

// Job is the kind-neutral view of a job.
type Job struct {
	// Object is the job itself.
	Object client.Object
	// Replicas are the replica types in rank order; the first is the leader's
	// type for kinds where one replica leads.
	Replicas []Replica
	// RunMode is the job's run mode; nil means immediate.
	RunMode *batchv1beta1.RunMode
	// CleanUpPolicy says which pods are deleted when the job finishes.
	CleanUpPolicy batchv1beta1.CleanUpPolicy
	// Scheduler chooses the scheduler; nil means the default one.
	Scheduler *batchv1beta1.SchedulePolicy
	// BackoffLimit is the restart budget shared by all replicas; nil means
	// none (each type has its own limit instead).
	BackoffLimit *int32
	// ActiveDeadlineSeconds bounds the run time from Status.StartTime.
	ActiveDeadlineSeconds *int64
	// MinMember is the PodGroup's gang size; 0 means every replica.
	MinMember int32
	// Status points into the object's status.
	Status *batchv1beta1.JobStatus
	// BackoffCount points into the object's status for kinds with a shared
	// budget; nil otherwise.
	BackoffCount *int32
}

// Replica is one replica type of a job.
type Replica struct {
	// Type names the replicas.
	Type string
	// Replicas is the number of pods wanted now.
	Replicas int32
	// Restart says when its pods are recreated.
	Restart Restart
	// Template is the pod template; never modified.
	Template *corev1.PodTemplateSpec
	// MainContainer names the container that debug and resume settings,
	// command rewriting and exit codes apply to; when no container has the
	// name, the first container is the main one.
	MainContainer string
	// Service makes the engine create a headless Service per replica, named
	// like its pod, with Ports.
	Service bool
	// Ports are the ports of the Services.
	Ports []corev1.ServicePort
	// RoleMin is the least number of this type's pods the PodGroup places
	// together (its role, named after the type).
	RoleMin int32
	// Unranked names the type's only pod <job>-<type>, without a rank, as
	// launchers are named.
	Unranked bool
	// AfterReady are the replica types every pod of which must be Ready
	// before this type's pods are created, as a launcher waits for its
	// workers.
	AfterReady []string
	// DebugCommand is what the main container runs in debug mode unless
	// the job's debug setting says otherwise; nil means DefaultDebugCommand.
	DebugCommand []string
	// KeepOnCleanUp keeps this type's ended pods when the job's clean-up
	// policy deletes the others, as a launcher is kept for its logs.
	KeepOnCleanUp bool
}

// PodName returns the name of the pod (and Service) of rank rank of r in
// job.
func (r *Replica) PodName(job string, rank int32) string {
	if r.Unranked {
		return job + "-" + r.Type
	}
	return PodName(job, r.Type, rank)
}

// Restart says when and how often a replica type's pods are recreated.
type Restart struct {
	// Policy is Never, OnFailure, Always or ExitCode.
	Policy batchv1beta1.ReplicaRestartPolicy
	// Limit is the most recreations of this type's pods together; nil means
	// no limit of the type's own.
	Limit *int32
}

// Total returns the number of replicas of every type.
func (j *Job) Total() int32 {
	var n int32
	for _, r := range j.Replicas {
		n += r.Replicas
	}
	return n
}

// Replica returns the replica type typ, or nil.
func (j *Job) Replica(typ string) *Replica {
	for i := range j.Replicas {
		if j.Replicas[i].Type == typ {
			return &j.Replicas[i]
		}
	}
	return nil
}

// Outcome is whether, and how, a job has finished.
type Outcome struct {
	// Done is true once the job has finished.
	Done bool
	// Succeeded tells success from failure once Done.
	Succeeded bool
	// Reason is the CamelCase reason of the Completed or Failed condition.
	Reason string
	// Message says why, for humans.
	Message string
}
