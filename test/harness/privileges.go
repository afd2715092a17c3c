package harness

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// inCI reports whether the tests run under CI, where every part must be present.
func inCI() bool { return os.Getenv("CI") != "" }

// missing fails the test in CI and skips it elsewhere, with the same reason.
func missing(t testing.TB, reason string) {
	t.Helper()
	if inCI() {
		t.Fatalf("%s (required in CI)", reason)
	}
	t.Skipf("skipping: %s", reason)
}

// RequireRoot fails the test in CI, and skips it elsewhere, unless the
// process runs as root.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		missing(t, "this test mounts file systems and needs root")
	}
}

// RequireFUSE is RequireRoot plus a usable /dev/fuse.
func RequireFUSE(t testing.TB) {
	t.Helper()
	RequireRoot(t)
	if err := unix.Access("/dev/fuse", unix.R_OK|unix.W_OK); err != nil {
		missing(t, "this test needs /dev/fuse: "+err.Error())
	}
}
