package ascendjob

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	mindxdlv1 "github.com/accelstack/accelstack/api/mindxdl/v1"
)

// Names ascend-operator uses.
const (
	// Container is the container the framework variables go into.
	Container = "ascend"
	// PortName names the leader's port.
	PortName = "ascendjob-port"
	// DefaultPort is that port when the template names none.
	DefaultPort = 2222
	// maxReplicas is the most pods of one type.
	maxReplicas = 20000
	// npuPrefix prefixes the NPU extended resources.
	npuPrefix = "huawei.com/"
)

// leaders maps each framework to its leading replica type.
var leaders = map[string]mindxdlv1.ReplicaType{
	mindxdlv1.FrameworkPyTorch:    mindxdlv1.ReplicaTypeMaster,
	mindxdlv1.FrameworkMindSpore:  mindxdlv1.ReplicaTypeScheduler,
	mindxdlv1.FrameworkTensorFlow: mindxdlv1.ReplicaTypeChief,
}

// canonical returns the CamelCase name of a replica type key, as
// ascend-operator's defaulting writes it (worker, WORKER: Worker); other
// keys are returned as they are.
func canonical(key mindxdlv1.ReplicaType) mindxdlv1.ReplicaType {
	for _, t := range []mindxdlv1.ReplicaType{mindxdlv1.ReplicaTypeMaster, mindxdlv1.ReplicaTypeScheduler, mindxdlv1.ReplicaTypeChief, mindxdlv1.ReplicaTypeWorker} {
		if strings.EqualFold(string(key), string(t)) {
			return t
		}
	}
	return key
}

// engineType is the engine's name of a replica type: lower case, as in the
// pod names <job>-master-0.
func engineType(t mindxdlv1.ReplicaType) string { return strings.ToLower(string(t)) }

// isLeader reports whether t is a leading type (any type but Worker).
func isLeader(t mindxdlv1.ReplicaType) bool { return canonical(t) != mindxdlv1.ReplicaTypeWorker }

// spec is one replica type of a job, by its canonical name.
type spec struct {
	key  mindxdlv1.ReplicaType // as written
	typ  mindxdlv1.ReplicaType // canonical
	spec *mindxdlv1.ReplicaSpec
}

// specs returns the job's replica types, leaders first, then Worker, then
// the rest by name.
func specs(aj *mindxdlv1.AscendJob) []spec {
	out := make([]spec, 0, len(aj.Spec.ReplicaSpecs))
	for k, s := range aj.Spec.ReplicaSpecs {
		out = append(out, spec{key: k, typ: canonical(k), spec: s})
	}
	order := func(t mindxdlv1.ReplicaType) int {
		switch t {
		case mindxdlv1.ReplicaTypeMaster, mindxdlv1.ReplicaTypeScheduler, mindxdlv1.ReplicaTypeChief:
			return 0
		case mindxdlv1.ReplicaTypeWorker:
			return 1
		}
		return 2
	}
	sort.Slice(out, func(i, j int) bool {
		if oi, oj := order(out[i].typ), order(out[j].typ); oi != oj {
			return oi < oj
		}
		return out[i].key < out[j].key
	})
	return out
}

// find returns the replica spec of canonical type t, or nil.
func find(aj *mindxdlv1.AscendJob, t mindxdlv1.ReplicaType) *mindxdlv1.ReplicaSpec {
	for k, s := range aj.Spec.ReplicaSpecs {
		if canonical(k) == t {
			return s
		}
	}
	return nil
}

// replicas returns the spec's pod count; 1 when unset.
func replicas(s *mindxdlv1.ReplicaSpec) int32 {
	if s == nil {
		return 0
	}
	if s.Replicas == nil {
		return 1
	}
	return *s.Replicas
}

// mainContainer returns the container named ascend of a pod spec, or nil.
func mainContainer(ps *corev1.PodSpec) *corev1.Container {
	for i := range ps.Containers {
		if ps.Containers[i].Name == Container {
			return &ps.Containers[i]
		}
	}
	return nil
}

// npuRequest returns the first NPU resource (by name) that a container of
// the template requests, and how many; "" and 0 when none does. The
// container ascend is looked at first.
func npuRequest(tmpl *corev1.PodTemplateSpec) (corev1.ResourceName, int) {
	cs := make([]*corev1.Container, 0, len(tmpl.Spec.Containers))
	if c := mainContainer(&tmpl.Spec); c != nil {
		cs = append(cs, c)
	}
	for i := range tmpl.Spec.Containers {
		if tmpl.Spec.Containers[i].Name != Container {
			cs = append(cs, &tmpl.Spec.Containers[i])
		}
	}
	for _, c := range cs {
		for _, list := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
			names := make([]string, 0, len(list))
			for n := range list {
				if strings.HasPrefix(string(n), npuPrefix) {
					names = append(names, string(n))
				}
			}
			sort.Strings(names)
			for _, n := range names {
				q := list[corev1.ResourceName(n)]
				if v := q.Value(); v > 0 {
					return corev1.ResourceName(n), int(v)
				}
			}
		}
	}
	return "", 0
}
