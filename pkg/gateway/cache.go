package gateway

import (
	"context"
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
	// filling holds the keys being loaded, for load's callers that miss
	// while another fills.
	filling map[K]*filling[V]
}

// filling is one load of a key in flight: done closes once value and err
// are set.
type filling[V any] struct {
	done  chan struct{}
	value V
	err   error
}

// ttlEntry is a value and when it expires.
type ttlEntry[V any] struct {
	value   V
	expires time.Time
}

// newTTLCache returns an empty cache; a ttl of 0 caches nothing.
func newTTLCache[K comparable, V any](ttl time.Duration, size int) *ttlCache[K, V] {
	return &ttlCache[K, V]{ttl: ttl, size: size, now: time.Now, entries: map[K]ttlEntry[V]{}, filling: map[K]*filling[V]{}}
}

// load returns the value of key, from the cache or else from fill, whose
// value it caches when fill succeeds. Callers that miss while another
// fills the same key wait for that answer instead of asking again: when
// an entry expires under load, one request asks the API server. A failed
// fill is not shared: each waiter then fills for itself (the error may be
// the first caller's own context ending).
func (c *ttlCache[K, V]) load(ctx context.Context, key K, fill func(context.Context) (V, error)) (V, error) {
	c.mu.Lock()
	if e, ok := c.entries[key]; ok && c.now().Before(e.expires) {
		c.mu.Unlock()
		return e.value, nil
	}
	if f, ok := c.filling[key]; ok {
		c.mu.Unlock()
		select {
		case <-f.done:
			if f.err == nil {
				return f.value, nil
			}
			return fill(ctx)
		case <-ctx.Done():
			var zero V
			return zero, ctx.Err()
		}
	}
	f := &filling[V]{done: make(chan struct{})}
	c.filling[key] = f
	c.mu.Unlock()

	f.value, f.err = fill(ctx)
	if f.err == nil {
		c.put(key, f.value)
	}
	c.mu.Lock()
	delete(c.filling, key)
	c.mu.Unlock()
	close(f.done)
	return f.value, f.err
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
