package jobs

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// deletedPods remembers the pods the engine deleted, by UID, for as long as a
// cache may still show them: a pod seen again after its deletion is neither
// counted as a restart twice nor taken for a live replica.
type deletedPods struct {
	mu  sync.Mutex
	m   map[types.UID]time.Time
	ttl time.Duration
}

func newDeletedPods() *deletedPods {
	return &deletedPods{m: map[types.UID]time.Time{}, ttl: 10 * time.Minute}
}

// add records uid as deleted now.
func (d *deletedPods) add(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	d.m[uid] = now
	if len(d.m)%1024 == 0 {
		for k, t := range d.m {
			if now.Sub(t) > d.ttl {
				delete(d.m, k)
			}
		}
	}
}

// has reports whether the engine deleted the pod uid.
func (d *deletedPods) has(uid types.UID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.m[uid]
	return ok
}
