package genericjob

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// variable matches $(...) references.
var variable = regexp.MustCompile(`\$\(([^()]*)\)`)

// Forms of the GenericJob variables.
var (
	replicasVar = regexp.MustCompile(`^replicas\[([^\]]*)\]$`)
	hostVar     = regexp.MustCompile(`^service\.([^\[\]]*)\[([^\]]*)\]\.host$`)
	portVar     = regexp.MustCompile(`^service\.port\[([^\]]*)\]$`)
)

// vars substitutes the variables of one replica.
type vars struct {
	job     *batchv1beta1.GenericJob
	typ     string
	rank    int32
	unknown map[string]string // variable -> why it was left
}

// expand replaces the variables in s that it knows. $(type), $(rank),
// $(replicas[<type>]), $(service.<type>[<rank>].host) and
// $(service.port[<name>]) are replaced; one of these forms that cannot be
// resolved is left as written and noted; any other $(NAME) is left alone,
// for Kubernetes to expand from the container's environment.
func (v *vars) expand(s string) string {
	if !strings.Contains(s, "$(") {
		return s
	}
	return variable.ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		val, ours, why := v.resolve(name)
		if ours && why != "" {
			if v.unknown == nil {
				v.unknown = map[string]string{}
			}
			v.unknown[ref] = why
			return ref
		}
		if !ours {
			return ref
		}
		return val
	})
}

// resolve returns the value of variable name; ours is false for names that
// are not GenericJob variables; why says why one of ours has no value.
func (v *vars) resolve(name string) (val string, ours bool, why string) {
	switch {
	case name == "type":
		return v.typ, true, ""
	case name == "rank":
		return strconv.Itoa(int(v.rank)), true, ""
	case replicasVar.MatchString(name):
		t := replicasVar.FindStringSubmatch(name)[1]
		if rs := v.replicaSpec(t); rs != nil {
			return strconv.Itoa(int(jobs.ReplicaCount(rs.Replicas))), true, ""
		}
		return "", true, "no replica type " + t
	case portVar.MatchString(name):
		p := portVar.FindStringSubmatch(name)[1]
		if v.job.Spec.Service == nil {
			return "", true, "spec.service is not set"
		}
		for _, sp := range v.job.Spec.Service.Ports {
			if sp.Name == p {
				return strconv.Itoa(int(sp.Port)), true, ""
			}
		}
		return "", true, "no port named " + p + " in spec.service.ports"
	case hostVar.MatchString(name):
		m := hostVar.FindStringSubmatch(name)
		if v.job.Spec.Service == nil {
			return "", true, "spec.service is not set"
		}
		rs := v.replicaSpec(m[1])
		if rs == nil {
			return "", true, "no replica type " + m[1]
		}
		rank, err := strconv.Atoi(m[2])
		if err != nil || rank < 0 || int32(rank) >= jobs.ReplicaCount(rs.Replicas) {
			return "", true, fmt.Sprintf("no rank %s among the %d %s replicas", m[2], jobs.ReplicaCount(rs.Replicas), m[1])
		}
		return jobs.PodName(v.job.Name, m[1], int32(rank)), true, ""
	case strings.HasPrefix(name, "service.") || strings.HasPrefix(name, "replicas["):
		return "", true, "not a GenericJob variable"
	}
	return "", false, ""
}

func (v *vars) replicaSpec(t string) *batchv1beta1.ReplicaSpec {
	for i := range v.job.Spec.ReplicaSpecs {
		if v.job.Spec.ReplicaSpecs[i].Type == t {
			return &v.job.Spec.ReplicaSpecs[i]
		}
	}
	return nil
}

// unknownNotes describes the variables left as written.
func (v *vars) unknownNotes() []string {
	var out []string
	for ref, why := range v.unknown {
		out = append(out, fmt.Sprintf("variable %s left as written: %s", ref, why))
	}
	sort.Strings(out)
	return out
}
