package queues

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// EventMaxDuration is the reason of the event on a pod deleted for its
// queue's maxDuration.
const EventMaxDuration = "MaxDurationExceeded"

// expired returns the pods that are at least limit old at now (age is now
// minus the creation time) and, when others will expire later, how long
// until the next does (0 when none will). Finished pods and pods already
// being deleted hold nothing and are left alone.
func expired(pods []*corev1.Pod, limit time.Duration, now time.Time) (victims []*corev1.Pod, next time.Duration) {
	for _, p := range pods {
		if queue.Finished(p) || p.DeletionTimestamp != nil {
			continue
		}
		left := p.CreationTimestamp.Add(limit).Sub(now)
		if left <= 0 {
			victims = append(victims, p)
			continue
		}
		if next == 0 || left < next {
			next = left
		}
	}
	return victims, next
}
