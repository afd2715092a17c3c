package ascendjob

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	mindxdlv1 "github.com/accelstack/accelstack/api/mindxdl/v1"
	"github.com/accelstack/accelstack/pkg/jobkind"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// +kubebuilder:rbac:groups=mindxdl.gitee.com,resources=ascendjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=mindxdl.gitee.com,resources=ascendjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;delete

// Kind is the AscendJob kind.
type Kind struct{}

var (
	_ jobs.Kind           = Kind{}
	_ jobs.Dependents     = Kind{}
	_ jobs.StatusReporter = Kind{}
)

// Component is the AscendJob's label name.
func (Kind) Component() string { return "ascendjob" }

// Info registers the AscendJob kind (jobkind.Info): its queue is named by
// spec.schedulerName and runPolicy.schedulingPolicy.queue, and no workflow
// step runs it.
var Info = jobkind.Info{
	GVK: mindxdlv1.GroupVersion.WithKind("AscendJob"), Resource: "ascendjobs", Engine: true,
	QueueMatch: `has(object.spec.schedulerName) && object.spec.schedulerName == "` + jobs.SchedulerName + `"`,
	PhasePath:  []string{"status", "detail", "phase"},
}

// Info returns the kind's registration.
func (Kind) Info() jobkind.Info { return Info }

// NewObject returns an empty AscendJob.
func (Kind) NewObject() client.Object { return &mindxdlv1.AscendJob{} }

// restartPolicies maps the replica restart policies to the engine's.
var restartPolicies = map[mindxdlv1.RestartPolicy]batchv1beta1.ReplicaRestartPolicy{
	"":                               batchv1beta1.ReplicaRestartNever,
	mindxdlv1.RestartPolicyNever:     batchv1beta1.ReplicaRestartNever,
	mindxdlv1.RestartPolicyOnFailure: batchv1beta1.ReplicaRestartOnFailure,
	mindxdlv1.RestartPolicyAlways:    batchv1beta1.ReplicaRestartAlways,
	mindxdlv1.RestartPolicyExitCode:  batchv1beta1.ReplicaRestartExitCode,
}

// cleanUpPolicies maps cleanPodPolicy to the engine's clean-up policy.
var cleanUpPolicies = map[mindxdlv1.CleanPodPolicy]batchv1beta1.CleanUpPolicy{
	mindxdlv1.CleanPodPolicyAll:     batchv1beta1.CleanUpPolicyAll,
	mindxdlv1.CleanPodPolicyRunning: batchv1beta1.CleanUpPolicyUnfinished,
	mindxdlv1.CleanPodPolicyNone:    batchv1beta1.CleanUpPolicyNone,
}

// View returns the engine's view: the leader first, then the workers, each
// type named in lower case, with no Services of the engine's (the leader's
// ClusterIP Service is the kind's own).
func (Kind) View(obj client.Object) *jobs.Job {
	aj := obj.(*mindxdlv1.AscendJob)
	rp := &aj.Spec.RunPolicy
	job := &jobs.Job{
		Object:                aj,
		CleanUpPolicy:         batchv1beta1.CleanUpPolicyNone,
		BackoffLimit:          backoffLimit(aj),
		ActiveDeadlineSeconds: rp.ActiveDeadlineSeconds,
		Status:                &aj.Status.Detail.JobStatus,
		BackoffCount:          &aj.Status.Detail.BackoffCount,
	}
	if c := rp.CleanPodPolicy; c != nil && cleanUpPolicies[*c] != "" {
		job.CleanUpPolicy = cleanUpPolicies[*c]
	}
	if sp := rp.SchedulingPolicy; aj.Spec.SchedulerName == jobs.SchedulerName {
		job.Scheduler = &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{}}
		if sp != nil {
			job.Scheduler.T9kScheduler.Queue = sp.Queue
			if sp.MinAvailable != nil {
				job.MinMember = *sp.MinAvailable
			}
		}
	}
	for _, s := range specs(aj) {
		if s.spec == nil {
			continue
		}
		n := replicas(s.spec)
		job.Replicas = append(job.Replicas, jobs.Replica{
			Type:          engineType(s.typ),
			Replicas:      n,
			Restart:       jobs.Restart{Policy: restartPolicies[s.spec.RestartPolicy]},
			Template:      &s.spec.Template,
			MainContainer: Container,
			RoleMin:       n,
		})
	}
	return job
}

// backoffLimit returns runPolicy.backoffLimit, else the label
// fault-retry-times, else nil: no limit.
func backoffLimit(aj *mindxdlv1.AscendJob) *int32 {
	if b := aj.Spec.RunPolicy.BackoffLimit; b != nil {
		return b
	}
	if n, err := strconv.ParseInt(aj.Labels[mindxdlv1.FaultRetryTimesLabel], 10, 32); err == nil && n > 0 {
		limit := int32(n)
		return &limit
	}
	return nil
}

// Validate checks the rules ascend-operator enforces, naming the fields.
func (Kind) Validate(obj, _ client.Object) field.ErrorList {
	var errs field.ErrorList
	for _, p := range check(obj.(*mindxdlv1.AscendJob)) {
		errs = append(errs, p.err)
	}
	return errs
}

// Outcome fails the job once a replica has failed for good, and lets it
// succeed once every replica has succeeded.
func (Kind) Outcome(job *jobs.Job, states *jobs.States) jobs.Outcome {
	all := states.All()
	for _, rs := range all {
		if rs.State != jobs.Failed {
			continue
		}
		o := jobs.Fail(fmt.Sprintf("The job failed: replica %s %s.", rs.Name, rs.Detail))
		if rs.Exhausted {
			o.Reason = jobs.ReasonBackoffLimit
		}
		return o
	}
	if len(all) > 0 && states.Count(jobs.Succeeded) == len(all) {
		return jobs.Succeed()
	}
	return jobs.Outcome{}
}
