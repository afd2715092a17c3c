package queue

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// PodRequests is what pod asks of its queue: the effective requests of its
// containers (init containers included as the kubelet accounts them) plus
// its overhead.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// TemplateRequests is what one pod made from spec asks of its queue. A
// container that gives a limit but no request for a resource requests its
// limit, as the API server defaults it when the pod is created.
func TemplateRequests(spec *corev1.PodSpec) corev1.ResourceList {
	pod := &corev1.Pod{Spec: *spec.DeepCopy()}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			r := &cs[i].Resources
			for name, limit := range r.Limits {
				if _, ok := r.Requests[name]; !ok {
					if r.Requests == nil {
						r.Requests = corev1.ResourceList{}
					}
					r.Requests[name] = limit.DeepCopy()
				}
			}
		}
	}
	return PodRequests(pod)
}

// Add adds b into a, allocating a when it is nil, and returns a.
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	if a == nil {
		a = corev1.ResourceList{}
	}
	for name, q := range b {
		sum := a[name]
		sum.Add(q)
		a[name] = sum
	}
	return a
}

// Sub subtracts b from a in place; a resource that drops to zero or below
// is removed.
func Sub(a, b corev1.ResourceList) {
	for name, q := range b {
		d, ok := a[name]
		if !ok {
			continue
		}
		d.Sub(q)
		if d.Sign() <= 0 {
			delete(a, name)
			continue
		}
		a[name] = d
	}
}

// Over returns the first resource, in name order, whose amount in used plus
// add exceeds limit, and whether there is one. Resources limit does not
// name are unlimited; zero amounts in add never exceed.
func Over(limit, used, add corev1.ResourceList) (corev1.ResourceName, bool) {
	for _, name := range sortedNames(add) {
		q := add[name]
		if q.Sign() <= 0 {
			continue
		}
		max, ok := limit[name]
		if !ok {
			continue
		}
		sum := used[name].DeepCopy()
		sum.Add(q)
		if sum.Cmp(max) > 0 {
			return name, true
		}
	}
	return "", false
}

// DominantShare is the largest fraction allocated/quota over the resources
// the quota names (dominant-resource fairness); 0 without a quota.
func DominantShare(allocated, quota corev1.ResourceList) float64 {
	var share float64
	for name, max := range quota {
		if max.Sign() <= 0 {
			continue
		}
		a := allocated[name]
		if s := a.AsApproximateFloat64() / max.AsApproximateFloat64(); s > share {
			share = s
		}
	}
	return share
}

func sortedNames(r corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(r))
	for name := range r {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}
