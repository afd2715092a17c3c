package harness

import (
	"path/filepath"
	"testing"
)

// RestartableS3 is a versitygw that a test can stop and start again on the
// same port and data directory, to simulate an S3 outage.
type RestartableS3 struct {
	*S3Server
	dir   string
	port  int
	proc  *Process
	start int
}

// StartRestartableS3 is StartS3 with Stop and Start.
func StartRestartableS3(t testing.TB) *RestartableS3 {
	t.Helper()
	r := &RestartableS3{dir: t.TempDir(), port: freePort(t)}
	r.Start(t)
	t.Cleanup(func() { r.Stop(t) })
	return r
}

// Start (re)starts the server and waits until it answers.
func (r *RestartableS3) Start(t testing.TB) {
	t.Helper()
	r.start++
	s, p, err := LaunchS3(r.dir, r.port, filepath.Join(r.dir, "versitygw.log"))
	if err != nil {
		t.Fatal(err)
	}
	r.S3Server, r.proc = s, p
}

// Stop stops the server; stopping a stopped server does nothing.
func (r *RestartableS3) Stop(t testing.TB) {
	t.Helper()
	if r.proc == nil {
		return
	}
	if err := r.proc.Stop(); err != nil {
		t.Logf("stopping versitygw: %v", err)
	}
	r.proc = nil
}
