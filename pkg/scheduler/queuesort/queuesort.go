// Package queuesort is the order in which the T9k Scheduler tries pending
// pods: the queue's priority (higher first), then, among queues of equal
// priority, the queue's dominant-resource share (lower first, so the queue
// furthest below its fair share goes next), then the PodGroup's priority
// (higher first), then the pod's own priority, then age (older first): a
// pod of a PodGroup takes its group's age, so the members of a gang are
// tried one after another and it completes without waiting on others.
package queuesort

import "time"

// Key is what the order looks at for one pending pod.
type Key struct {
	// QueuePriority is the priority of the pod's queue (0 without one).
	QueuePriority int32
	// QueueShare is the dominant share of the pod's queue: the largest
	// allocated/quota fraction over its resources.
	QueueShare float64
	// GroupPriority is the priority of the pod's PodGroup (0 without one).
	GroupPriority int32
	// PodPriority is the pod's priority from its PriorityClass.
	PodPriority int32
	// Timestamp is when the pod entered the scheduling queue.
	Timestamp time.Time
	// Group is the pod's PodGroup ("namespace/name"), "" for none, and
	// GroupTimestamp when the group was created.
	Group          string
	GroupTimestamp time.Time
}

// since is when the pod's gang, or the pod itself, came.
func (k Key) since() time.Time {
	if k.Group != "" {
		return k.GroupTimestamp
	}
	return k.Timestamp
}

// Less reports whether a goes before b.
func Less(a, b Key) bool {
	switch {
	case a.QueuePriority != b.QueuePriority:
		return a.QueuePriority > b.QueuePriority
	case a.QueueShare != b.QueueShare:
		return a.QueueShare < b.QueueShare
	case a.GroupPriority != b.GroupPriority:
		return a.GroupPriority > b.GroupPriority
	case a.PodPriority != b.PodPriority:
		return a.PodPriority > b.PodPriority
	case !a.since().Equal(b.since()):
		return a.since().Before(b.since())
	case a.Group != b.Group:
		return a.Group < b.Group
	}
	return a.Timestamp.Before(b.Timestamp)
}
