package genericjob

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// outcome applies gj's rules to its replicas' states. Without success rules
// the job succeeds once every replica has; without failure rules it fails
// once any replica has failed for good.
func outcome(gj *batchv1beta1.GenericJob, states *jobs.States) jobs.Outcome {
	holds := func(rule batchv1beta1.FinishRule, want jobs.State) bool {
		n := 0
		for typ, ranks := range rule {
			for _, rank := range ranks {
				s := states.Get(gj.Name, typ, rank)
				if s == nil || s.State != want {
					return false
				}
				n++
			}
		}
		return n > 0
	}
	if len(gj.Spec.SuccessRules) == 0 {
		if len(states.All()) > 0 && states.Count(jobs.Succeeded) == len(states.All()) {
			return jobs.Succeed()
		}
	}
	for _, rule := range gj.Spec.SuccessRules {
		if holds(rule, jobs.Succeeded) {
			return jobs.Succeed()
		}
	}
	if len(gj.Spec.FailureRules) == 0 {
		for _, rs := range states.All() {
			if rs.State == jobs.Failed {
				return jobs.Fail(fmt.Sprintf("The job failed: replica %s %s.", rs.Name, rs.Detail))
			}
		}
	}
	for _, rule := range gj.Spec.FailureRules {
		if holds(rule, jobs.Failed) {
			return jobs.Fail("The job is failed with rule: " + FormatRule(rule))
		}
	}
	return jobs.Outcome{}
}

// FormatRule writes rule as the job's messages show it, e.g.
// { "master": [2], "worker": [0, 1] }.
func FormatRule(rule batchv1beta1.FinishRule) string {
	types := make([]string, 0, len(rule))
	for t := range rule {
		types = append(types, t)
	}
	sort.Strings(types)
	parts := make([]string, 0, len(types))
	for _, t := range types {
		ranks := make([]string, 0, len(rule[t]))
		for _, r := range rule[t] {
			ranks = append(ranks, strconv.Itoa(int(r)))
		}
		parts = append(parts, fmt.Sprintf("%q: [%s]", t, strings.Join(ranks, ", ")))
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// validateRules checks that every rule names existing replicas.
func validateRules(gj *batchv1beta1.GenericJob) field.ErrorList {
	var errs field.ErrorList
	counts := map[string]int32{}
	for _, rs := range gj.Spec.ReplicaSpecs {
		counts[rs.Type] = jobs.ReplicaCount(rs.Replicas)
	}
	check := func(p *field.Path, rules []batchv1beta1.FinishRule) {
		for i, rule := range rules {
			rp := p.Index(i)
			if len(rule) == 0 {
				errs = append(errs, field.Invalid(rp, rule, "a rule must name at least one replica"))
			}
			types := make([]string, 0, len(rule))
			for t := range rule {
				types = append(types, t)
			}
			sort.Strings(types)
			for _, t := range types {
				n, ok := counts[t]
				if !ok {
					errs = append(errs, field.NotFound(rp.Key(t), t))
					continue
				}
				if len(rule[t]) == 0 {
					errs = append(errs, field.Invalid(rp.Key(t), rule[t], "name at least one rank"))
				}
				for j, rank := range rule[t] {
					if rank < 0 || rank >= n {
						errs = append(errs, field.Invalid(rp.Key(t).Index(j), rank, fmt.Sprintf("rank out of range: type %s has %d replicas", t, n)))
					}
				}
			}
		}
	}
	check(field.NewPath("spec", "successRules"), gj.Spec.SuccessRules)
	check(field.NewPath("spec", "failureRules"), gj.Spec.FailureRules)
	return errs
}

// validateService checks the exposed ports.
func validateService(gj *batchv1beta1.GenericJob) field.ErrorList {
	if gj.Spec.Service == nil {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("spec", "service", "ports")
	names := map[string]bool{}
	for i, port := range gj.Spec.Service.Ports {
		if port.Port < 1 || port.Port > 65535 {
			errs = append(errs, field.Invalid(p.Index(i).Child("port"), port.Port, "must be between 1 and 65535"))
		}
		if names[port.Name] {
			errs = append(errs, field.Duplicate(p.Index(i).Child("name"), port.Name))
		}
		names[port.Name] = true
		if len(gj.Spec.Service.Ports) > 1 && port.Name == "" {
			errs = append(errs, field.Required(p.Index(i).Child("name"), "ports need names when there are several"))
		}
	}
	return errs
}
