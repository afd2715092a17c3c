package jobs

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// MaxJobPods is the most pods one job may have: the sum of its replica
// counts (at their largest, for elastic jobs). The controller works out
// the state of every replica of a job each time it reconciles it, and the
// job's pods, Services and status grow with them too; a bound per job keeps
// one tenant's job from exhausting the memory of the controller that every
// tenant shares. Ten thousand is more than the largest training jobs run;
// each replica count field of the API has the same maximum
// (batchv1beta1.MaxReplicas).
const MaxJobPods = 10000

// Shape is what the engine checks of every kind's spec.
type Shape struct {
	// Name is the job's name.
	Name string
	// Types are the replica types in spec order, and MaxReplicas the most
	// pods each may have.
	Types       []string
	MaxReplicas []int32
	// CountPath is the field the replica counts are written in, which
	// messages name; nil means spec.replicaSpecs[*].replicas.
	CountPath *field.Path
	// RunMode and Scheduler are the job's.
	RunMode   *batchv1beta1.RunMode
	Scheduler *batchv1beta1.SchedulePolicy
}

var (
	specPath     = field.NewPath("spec")
	replicasPath = specPath.Child("replicaSpecs")
)

// ValidateShape checks what every kind requires: at least one replica
// type, each once, named so that its pods' names are DNS labels; at most
// MaxJobPods pods in all; run-mode settings for existing types only; a
// queue for the T9k Scheduler.
func ValidateShape(s Shape) field.ErrorList {
	var errs field.ErrorList
	if len(s.Types) == 0 {
		errs = append(errs, field.Required(replicasPath, "at least one replica type is required"))
	}
	if n := totalPods(s.MaxReplicas); n > MaxJobPods {
		p := s.CountPath
		if p == nil {
			p = replicasPath.Key("*").Child("replicas")
		}
		errs = append(errs, field.Invalid(p, n, tooManyPods(n)))
	}
	seen := map[string]bool{}
	for i, t := range s.Types {
		p := replicasPath.Index(i).Child("type")
		if seen[t] {
			errs = append(errs, field.Duplicate(p, t))
			continue
		}
		seen[t] = true
		if msgs := validation.IsDNS1123Label(t); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p, t, msgs[0]))
			continue
		}
		last := s.MaxReplicas[i] - 1
		if last < 0 {
			last = 0
		}
		if name := PodName(s.Name, t, last); len(validation.IsDNS1035Label(name)) > 0 {
			errs = append(errs, field.Invalid(p, t, fmt.Sprintf(
				"the replica name %s (<job>-<type>-<rank>) must be a DNS label of at most 63 characters starting with a letter: shorten the job name or the type", name)))
		}
	}
	if rm := s.RunMode; rm != nil {
		if rm.Debug != nil {
			for i, d := range rm.Debug.ReplicaSpecs {
				if !seen[d.Type] {
					errs = append(errs, field.NotFound(specPath.Child("runMode", "debug", "replicaSpecs").Index(i).Child("type"), d.Type))
				}
			}
		}
		if rm.Pause != nil {
			for i, r := range rm.Pause.ResumeSpecs {
				if !seen[r.Type] {
					errs = append(errs, field.NotFound(specPath.Child("runMode", "pause", "resumeSpecs").Index(i).Child("type"), r.Type))
				}
			}
		}
	}
	if sc := s.Scheduler; sc != nil && sc.T9kScheduler != nil {
		p := specPath.Child("scheduler", "t9kScheduler")
		if sc.T9kScheduler.Queue == "" {
			errs = append(errs, field.Required(p.Child("queue"), "the T9k Scheduler needs a queue"))
		}
		if pr := sc.T9kScheduler.Priority; pr < 0 || pr > 100 {
			errs = append(errs, field.Invalid(p.Child("priority"), pr, "must be between 0 and 100"))
		}
	}
	return errs
}

// totalPods sums counts, taking a negative count as none, without
// overflowing.
func totalPods(counts []int32) int64 {
	var n int64
	for _, c := range counts {
		n += int64(max(c, 0))
	}
	return n
}

// tooManyPods says that a job of n pods is too large.
func tooManyPods(n int64) string {
	return fmt.Sprintf("the replicas of all types add up to %d pods, more than the %d a job may have", n, MaxJobPods)
}

// ValidateShapeUpdate checks what may not change once a job exists:
// pause.resumeSpecs.
func ValidateShapeUpdate(old, cur Shape) field.ErrorList {
	if !equality.Semantic.DeepEqual(resumeSpecs(old.RunMode), resumeSpecs(cur.RunMode)) {
		return field.ErrorList{field.Forbidden(specPath.Child("runMode", "pause", "resumeSpecs"), "cannot be changed after the job is created")}
	}
	return nil
}

func resumeSpecs(rm *batchv1beta1.RunMode) []batchv1beta1.ResumeSpec {
	if rm == nil || rm.Pause == nil || len(rm.Pause.ResumeSpecs) == 0 {
		return nil
	}
	return rm.Pause.ResumeSpecs
}

// ReplicaCount returns *n, or 1 when n is nil (the API's default).
func ReplicaCount(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}
