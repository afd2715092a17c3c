package login

import (
	"sync"
	"time"
)

// throttle refuses a user name's logins for a window after max failures
// within it, so a password cannot be guessed at the directory's speed.
// It remembers at most size names; when full, it forgets the quiet ones,
// and a name it cannot remember is not throttled.
type throttle struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	size   int
	fails  map[string][]time.Time
}

func newThrottle(limit int, window time.Duration, size int) *throttle {
	return &throttle{max: limit, window: window, size: size, fails: map[string][]time.Time{}}
}

// allowed reports whether name may try now.
func (t *throttle) allowed(name string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.recent(name, now)) < t.max
}

// failed records a failure of name.
func (t *throttle) failed(name string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	rec := t.recent(name, now)
	if rec == nil && len(t.fails) >= t.size {
		for n := range t.fails {
			t.recent(n, now)
		}
		if len(t.fails) >= t.size {
			return
		}
	}
	t.fails[name] = append(rec, now)
}

// succeeded forgets name's failures.
func (t *throttle) succeeded(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.fails, name)
}

// recent returns name's failures within the window, forgetting older ones.
func (t *throttle) recent(name string, now time.Time) []time.Time {
	rec := t.fails[name]
	i := 0
	for i < len(rec) && now.Sub(rec[i]) >= t.window {
		i++
	}
	switch {
	case i == len(rec):
		delete(t.fails, name)
		return nil
	case i > 0:
		rec = rec[i:]
		t.fails[name] = rec
	}
	return rec
}
