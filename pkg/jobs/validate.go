package jobs

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// Shape is what the engine checks of every kind's spec.
type Shape struct {
	// Name is the job's name.
	Name string
	// Types are the replica types in spec order, and MaxReplicas the most
	// pods each may have.
	Types       []string
	MaxReplicas []int32
	// RunMode and Scheduler are the job's.
	RunMode   *batchv1beta1.RunMode
	Scheduler *batchv1beta1.SchedulePolicy
}

var (
	specPath     = field.NewPath("spec")
	replicasPath = specPath.Child("replicaSpecs")
)

// ValidateShape checks what every kind requires: at least one replica
// type, each once, named so that its pods' names are DNS labels; run-mode
// settings for existing types only; a queue for the T9k Scheduler.
func ValidateShape(s Shape) field.ErrorList {
	var errs field.ErrorList
	if len(s.Types) == 0 {
		errs = append(errs, field.Required(replicasPath, "at least one replica type is required"))
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
