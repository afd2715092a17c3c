// Package preemption chooses what the T9k Scheduler evicts to place a pod
// that fits nowhere: only pods of queues of lower priority than the pod's
// own and never of a queue with preemptible: false; the least important
// first (lowest queue priority, then the queue furthest over its fair
// share, then the lowest PodGroup priority, then the youngest); and a pod
// of a PodGroup only with its whole group, so no gang is left broken.
package preemption

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Victim is a running pod that preemption may evict.
type Victim struct {
	Pod *corev1.Pod
	// Group identifies the pod's PodGroup ("namespace/name"), "" for none.
	Group string
	// QueuePriority and QueueShare are those of the pod's queue.
	QueuePriority int32
	QueueShare    float64
	// GroupPriority is the priority of the pod's PodGroup.
	GroupPriority int32
}

// Eligible reports whether a pod of a queue of priority victimPriority and
// the given preemptible flag (nil means preemptible) may be evicted for a
// pod of a queue of priority preemptorPriority.
func Eligible(preemptorPriority, victimPriority int32, preemptible *bool) bool {
	if preemptible != nil && !*preemptible {
		return false
	}
	return victimPriority < preemptorPriority
}

// Sort orders victims least important first.
func Sort(v []Victim) {
	sort.SliceStable(v, func(i, j int) bool { return less(&v[i], &v[j]) })
}

func less(a, b *Victim) bool {
	switch {
	case a.QueuePriority != b.QueuePriority:
		return a.QueuePriority < b.QueuePriority
	case a.QueueShare != b.QueueShare:
		return a.QueueShare > b.QueueShare
	case a.GroupPriority != b.GroupPriority:
		return a.GroupPriority < b.GroupPriority
	}
	ta, tb := a.Pod.CreationTimestamp, b.Pod.CreationTimestamp
	if !ta.Equal(&tb) {
		return tb.Before(&ta) // younger first: less work lost
	}
	return a.Pod.Name > b.Pod.Name
}

// Plan picks, from victims on one node sorted by Sort, the fewest to evict
// so that fits holds: it evicts in order until the pod fits, then spares
// again every chosen victim, most important first, whose eviction turns out
// not to be needed. It returns false when evicting all of them is not enough.
func Plan(sorted []Victim, fits func(evicted []Victim) bool) ([]Victim, bool) {
	var chosen []Victim
	ok := fits(nil)
	for i := 0; !ok && i < len(sorted); i++ {
		chosen = append(chosen, sorted[i])
		ok = fits(chosen)
	}
	if !ok {
		return nil, false
	}
	for i := len(chosen) - 1; i >= 0; i-- {
		rest := append(append([]Victim(nil), chosen[:i]...), chosen[i+1:]...)
		if fits(rest) {
			chosen = rest
		}
	}
	return chosen, true
}

// Cost is what a plan costs: the pods it evicts once every group a victim
// belongs to is evicted whole (members counts each group's pods), and the
// most important victim's rank, for breaking ties.
func Cost(plan []Victim, members map[string]int) (pods int, top Victim) {
	groups := map[string]bool{}
	for i, v := range plan {
		if i == 0 || less(&top, &v) {
			top = v
		}
		if v.Group == "" {
			pods++
			continue
		}
		if !groups[v.Group] {
			groups[v.Group] = true
			pods += max(members[v.Group], 1)
		}
	}
	return pods, top
}

// Cheaper reports whether a plan of cost (pods, top) is better than one of
// cost (otherPods, otherTop): fewer pods evicted, then a less important
// most important victim.
func Cheaper(pods int, top Victim, otherPods int, otherTop Victim) bool {
	if pods != otherPods {
		return pods < otherPods
	}
	return less(&top, &otherTop)
}
