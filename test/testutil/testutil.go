// Package testutil holds the small helpers the unit tests of the node
// packages (device plugin, vendors, node agent) share: a bounded context
// and a temporary directory short enough for unix sockets.
package testutil

import (
	"context"
	"os"
	"testing"
	"time"
)

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
