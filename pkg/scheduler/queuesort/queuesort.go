// Package queuesort is the order in which the T9k Scheduler tries pending
// pods: the queue's priority (higher first), then, among queues of equal
// priority, the queue's dominant-resource share (lower first, so the queue
// furthest below its fair share goes next), then the PodGroup's priority
// (higher first), then the pod's own priority, then age (older first).
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
	}
	return a.Timestamp.Before(b.Timestamp)
}
