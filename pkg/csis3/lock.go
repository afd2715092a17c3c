package csis3

import "sync"

// keyedMutex serialises operations per key (volume ID), so that concurrent
// calls for one volume do not race while different volumes proceed.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedEntry
}

// keyedEntry is one key's lock and its number of holders and waiters.
type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

// newKeyedMutex returns an empty keyedMutex.
func newKeyedMutex() *keyedMutex { return &keyedMutex{locks: map[string]*keyedEntry{}} }

// lock locks key and returns its unlock function.
func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	e := k.locks[key]
	if e == nil {
		e = &keyedEntry{}
		k.locks[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
