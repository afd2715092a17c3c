package gateway

import (
	"sync"
	"time"
)

// ttlCache is a map whose entries expire ttl after they are put, holding
// at most size: when full, expired entries are dropped, and if none had
// expired, all are, so that a flood of distinct keys costs misses, never
// memory.
type ttlCache[K comparable, V any] struct {
	ttl  time.Duration
	size int
	now  func() time.Time

	mu      sync.Mutex
	entries map[K]ttlEntry[V]
}

// ttlEntry is a value and when it expires.
type ttlEntry[V any] struct {
	value   V
	expires time.Time
}

// newTTLCache returns an empty cache; a ttl of 0 caches nothing.
func newTTLCache[K comparable, V any](ttl time.Duration, size int) *ttlCache[K, V] {
	return &ttlCache[K, V]{ttl: ttl, size: size, now: time.Now, entries: map[K]ttlEntry[V]{}}
}

// get returns the value of key unless it is missing or expired.
func (c *ttlCache[K, V]) get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !c.now().Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// put sets the value of key.
func (c *ttlCache[K, V]) put(key K, value V) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.size {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.size {
			clear(c.entries)
		}
	}
	c.entries[key] = ttlEntry[V]{value: value, expires: now.Add(c.ttl)}
}

// delete drops key.
func (c *ttlCache[K, V]) delete(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
}
