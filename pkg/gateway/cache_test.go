package gateway

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCacheLoadFillsOnce checks that callers missing the same key at once
// share one fill, that its value is then cached, and that a failed fill
// is neither cached nor shared.
func TestCacheLoadFillsOnce(t *testing.T) {
	c := newTTLCache[string, int](time.Minute, 10)
	var fills atomic.Int32
	release := make(chan struct{})
	fill := func(context.Context) (int, error) {
		fills.Add(1)
		<-release
		return 42, nil
	}
	const callers = 8
	var wg sync.WaitGroup
	got := make([]int, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() { got[i], errs[i] = c.load(context.Background(), "k", fill) })
	}
	// Let every caller reach the cache before the fill answers.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		_, inFlight := c.filling["k"]
		c.mu.Unlock()
		if inFlight || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || got[i] != 42 {
			t.Fatalf("caller %d: %d, %v", i, got[i], errs[i])
		}
	}
	if n := fills.Load(); n != 1 {
		t.Errorf("%d fills for %d callers at once, want 1", n, callers)
	}
	if v, err := c.load(context.Background(), "k", func(context.Context) (int, error) { return 0, errors.New("not cached") }); err != nil || v != 42 {
		t.Errorf("after the fill: %d, %v; want the cached 42", v, err)
	}

	boom := errors.New("boom")
	if _, err := c.load(context.Background(), "bad", func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed fill: %v", err)
	}
	if v, err := c.load(context.Background(), "bad", func(context.Context) (int, error) { return 7, nil }); err != nil || v != 7 {
		t.Errorf("after a failed fill: %d, %v; want a new fill's 7", v, err)
	}
}

// TestCacheLoadExpires checks that an expired entry is filled again.
func TestCacheLoadExpires(t *testing.T) {
	c := newTTLCache[string, int](time.Minute, 10)
	now := time.Now()
	c.now = func() time.Time { return now }
	n := 0
	fill := func(context.Context) (int, error) { n++; return n, nil }
	if v, _ := c.load(context.Background(), "k", fill); v != 1 {
		t.Fatalf("first load %d", v)
	}
	if v, _ := c.load(context.Background(), "k", fill); v != 1 {
		t.Fatalf("cached load %d, want 1", v)
	}
	now = now.Add(time.Minute)
	if v, _ := c.load(context.Background(), "k", fill); v != 2 {
		t.Errorf("load after the ttl %d, want a new fill's 2", v)
	}
}
