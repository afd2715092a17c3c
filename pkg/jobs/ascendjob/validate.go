package ascendjob

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	mindxdlv1 "github.com/accelstack/accelstack/api/mindxdl/v1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// The reasons of ascend-operator's validation, each naming a rule broken.
const (
	ReasonInvalidFramework     = "InvalidFramework"
	ReasonInvalidReplicaType   = "InvalidReplicaType"
	ReasonInvalidSpecs         = "InvalidSpecs"
	ReasonInvalidReplicaSpec   = "InvalidReplicaSpec"
	ReasonInvalidContainer     = "InvalidContainer"
	ReasonInvalidSuccessPolicy = "InvalidSuccessPolicy"
	ReasonInvalidQueue         = "InvalidQueue"
)

// problem is one broken rule: its reason and the field.
type problem struct {
	reason string
	err    *field.Error
}

var (
	labelsPath   = field.NewPath("metadata", "labels")
	specPath     = field.NewPath("spec")
	replicasPath = specPath.Child("replicaSpecs")
	policyPath   = specPath.Child("runPolicy")
)

// allowedTypes are the replica types of each framework.
var allowedTypes = map[string][]string{
	mindxdlv1.FrameworkPyTorch:    {"Master", "Worker"},
	mindxdlv1.FrameworkMindSpore:  {"Scheduler", "Worker"},
	mindxdlv1.FrameworkTensorFlow: {"Chief", "Worker"},
}

// check returns every rule the job breaks, in a stable order.
func check(aj *mindxdlv1.AscendJob) []problem {
	var ps []problem
	add := func(reason string, err *field.Error) { ps = append(ps, problem{reason, err}) }

	fw, ok := aj.Labels[mindxdlv1.FrameworkLabel]
	allowed := allowedTypes[fw]
	switch {
	case !ok:
		add(ReasonInvalidFramework, field.Required(labelsPath.Key(mindxdlv1.FrameworkLabel), "the framework label is required: pytorch, mindspore or tensorflow"))
	case allowed == nil:
		add(ReasonInvalidFramework, field.NotSupported(labelsPath.Key(mindxdlv1.FrameworkLabel), fw, []string{mindxdlv1.FrameworkPyTorch, mindxdlv1.FrameworkMindSpore, mindxdlv1.FrameworkTensorFlow}))
	}

	if len(aj.Spec.ReplicaSpecs) == 0 {
		add(ReasonInvalidSpecs, field.Required(replicasPath, "at least one replica type is required"))
	}
	seen := map[mindxdlv1.ReplicaType]mindxdlv1.ReplicaType{}
	workerNPUs := 0
	var pods int64
	for _, s := range specs(aj) {
		p := replicasPath.Key(string(s.key))
		if prev, dup := seen[s.typ]; dup {
			add(ReasonInvalidReplicaType, field.Duplicate(p, fmt.Sprintf("%s and %s are the same type", prev, s.key)))
			continue
		}
		seen[s.typ] = s.key
		if allowed != nil && !slices.Contains(allowed, string(s.typ)) {
			add(ReasonInvalidReplicaType, field.NotSupported(p, string(s.key), allowed))
			continue
		}
		if s.spec == nil {
			add(ReasonInvalidReplicaSpec, field.Required(p, "the replica spec must not be empty"))
			continue
		}
		n := replicas(s.spec)
		pods += int64(max(n, 0))
		if n < 0 || n > maxReplicas {
			add(ReasonInvalidReplicaSpec, field.Invalid(p.Child("replicas"), n, fmt.Sprintf("must be between 0 and %d", maxReplicas)))
		}
		if isLeader(s.typ) && n != 1 {
			add(ReasonInvalidReplicaSpec, field.Invalid(p.Child("replicas"), n, fmt.Sprintf("%s must have exactly 1 replica", s.typ)))
		}
		switch s.spec.RestartPolicy {
		case "", mindxdlv1.RestartPolicyNever, mindxdlv1.RestartPolicyOnFailure, mindxdlv1.RestartPolicyAlways, mindxdlv1.RestartPolicyExitCode:
		default:
			add(ReasonInvalidReplicaSpec, field.NotSupported(p.Child("restartPolicy"), string(s.spec.RestartPolicy), []string{"Never", "OnFailure", "Always", "ExitCode"}))
		}
		cp := p.Child("template", "spec", "containers")
		if len(s.spec.Template.Spec.Containers) == 0 {
			add(ReasonInvalidReplicaSpec, field.Required(cp, "at least one container is required"))
		} else if c := mainContainer(&s.spec.Template.Spec); c == nil {
			add(ReasonInvalidContainer, field.Required(cp, "a container named "+Container+" is required"))
		} else if c.Image == "" {
			add(ReasonInvalidContainer, field.Required(cp.Key(Container).Child("image"), "the "+Container+" container needs an image"))
		}
		if last := max(n-1, 0); len(validation.IsDNS1035Label(jobs.PodName(aj.Name, engineType(s.typ), last))) > 0 {
			add(ReasonInvalidSpecs, field.Invalid(p, string(s.key), fmt.Sprintf(
				"the pod name %s (<job>-<type>-<rank>) must be a DNS label of at most 63 characters starting with a letter: shorten the job name",
				jobs.PodName(aj.Name, engineType(s.typ), last))))
		}
		if s.typ == mindxdlv1.ReplicaTypeWorker {
			_, req := npuRequest(&s.spec.Template)
			workerNPUs = req * int(n)
		}
	}
	if pods > jobs.MaxJobPods {
		add(ReasonInvalidReplicaSpec, field.Invalid(replicasPath.Key("*").Child("replicas"), pods, fmt.Sprintf(
			"the replicas of all types add up to %d pods, more than the %d a job may have", pods, jobs.MaxJobPods)))
	}
	if lead, ok := leaders[fw]; ok && len(aj.Spec.ReplicaSpecs) > 0 {
		if _, has := seen[lead]; !has {
			if fw == mindxdlv1.FrameworkMindSpore {
				if workerNPUs > 1 {
					add(ReasonInvalidReplicaSpec, field.Required(replicasPath.Key(string(lead)),
						fmt.Sprintf("a MindSpore job without a Scheduler runs on one NPU at most; its workers request %d", workerNPUs)))
				}
			} else {
				add(ReasonInvalidReplicaType, field.Required(replicasPath.Key(string(lead)), fmt.Sprintf("a %s job needs a %s", fw, lead)))
			}
		}
	}

	if sp := aj.Spec.SuccessPolicy; sp != nil && *sp != mindxdlv1.SuccessPolicyDefault && *sp != mindxdlv1.SuccessPolicyAllWorkers {
		add(ReasonInvalidSuccessPolicy, field.NotSupported(specPath.Child("successPolicy"), string(*sp), []string{"", string(mindxdlv1.SuccessPolicyAllWorkers)}))
	}
	rp := aj.Spec.RunPolicy
	if c := rp.CleanPodPolicy; c != nil && *c != mindxdlv1.CleanPodPolicyAll && *c != mindxdlv1.CleanPodPolicyRunning && *c != mindxdlv1.CleanPodPolicyNone {
		add(ReasonInvalidSpecs, field.NotSupported(policyPath.Child("cleanPodPolicy"), string(*c), []string{"All", "Running", "None"}))
	}
	if d := rp.ActiveDeadlineSeconds; d != nil && *d <= 0 {
		add(ReasonInvalidSpecs, field.Invalid(policyPath.Child("activeDeadlineSeconds"), *d, "must be positive"))
	}
	if b := rp.BackoffLimit; b != nil && *b < 0 {
		add(ReasonInvalidSpecs, field.Invalid(policyPath.Child("backoffLimit"), *b, "must not be negative"))
	}
	if aj.Spec.SchedulerName == jobs.SchedulerName && (rp.SchedulingPolicy == nil || rp.SchedulingPolicy.Queue == "") {
		add(ReasonInvalidQueue, field.Required(policyPath.Child("schedulingPolicy", "queue"), "the T9k Scheduler needs a queue"))
	}
	return ps
}
