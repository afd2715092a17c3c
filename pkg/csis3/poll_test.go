package csis3

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	t.Run("done", func(t *testing.T) {
		calls := 0
		err := poll(context.Background(), time.Minute, func(context.Context) (bool, error) {
			calls++
			return calls == 3, nil
		})
		if err != nil || calls != 3 {
			t.Fatalf("poll = %v after %d calls; want nil after 3", err, calls)
		}
	})
	t.Run("condition error", func(t *testing.T) {
		boom := errors.New("boom")
		if err := poll(context.Background(), time.Minute, func(context.Context) (bool, error) { return false, boom }); !errors.Is(err, boom) {
			t.Fatalf("poll = %v, want the condition's error", err)
		}
	})
	t.Run("backs off until the timeout", func(t *testing.T) {
		calls := 0
		err := poll(context.Background(), 700*time.Millisecond, func(context.Context) (bool, error) {
			calls++
			return false, nil
		})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("poll = %v, want the deadline", err)
		}
		// Intervals of 10, 12.5, 15.6, ... ms fit 13 calls in 700 ms, where
		// a steady 10 ms poll would make about 70.
		if calls < 2 || calls > 20 {
			t.Fatalf("%d calls in 700ms, want 2 to 20 with the back-off", calls)
		}
	})
	t.Run("caller's context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := poll(ctx, time.Minute, func(context.Context) (bool, error) { return false, nil }); !errors.Is(err, context.Canceled) {
			t.Fatalf("poll = %v, want the caller's cancellation", err)
		}
	})
}
