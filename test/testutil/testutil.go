// Package testutil holds the small helpers tests share: a bounded context,
// a temporary directory short enough for unix sockets, and a poll that
// fails with what it last saw.
package testutil

import (
	"context"
	"os"
	"testing"
	"time"
)

// Eventually polls cond every 100 ms until it holds, for at most d or
// until ctx ends, and fails the test with what cond last said. An error
// from cond fails the test at once.
func Eventually(ctx context.Context, t testing.TB, d time.Duration, what string, cond func() (bool, string, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, last, err := cond()
		switch {
		case err != nil:
			t.Fatalf("%s: %v", what, err)
		case ok:
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v; last: %s", what, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// Timeout bounds every wait of a test using Context.
const Timeout = 60 * time.Second

// Context returns a context that ends after Timeout or with the test; it is
// a safety net for waits, not an assertion.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	t.Cleanup(cancel)
	return ctx
}

// ShortDir returns a new directory removed when the test ends. Unix socket
// paths are limited to 108 bytes and t.TempDir can be longer, so it is
// made directly under the system's temporary directory.
func ShortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "dp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// SubtestTimeout bounds a subtest of an integration package, whose
// subtests share one control plane.
const SubtestTimeout = 3 * time.Minute

// SubtestContext returns a context that ends after SubtestTimeout or with
// the test.
func SubtestContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), SubtestTimeout)
	t.Cleanup(cancel)
	return ctx
}

// PollTimeout bounds one wait of Poll: long enough for a controller's
// retry with backoff on a loaded machine.
const PollTimeout = 90 * time.Second

// Poll is Eventually for at most PollTimeout.
func Poll(ctx context.Context, t testing.TB, what string, cond func() (bool, string, error)) {
	t.Helper()
	Eventually(ctx, t, PollTimeout, what, cond)
}
