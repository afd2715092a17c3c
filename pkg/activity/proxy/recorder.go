package proxy

import (
	"sync/atomic"
	"time"

	"github.com/accelstack/accelstack/pkg/activity"
)

// Recorder holds what the sidecar has seen. It is safe for concurrent use.
type Recorder struct {
	now   func() time.Time
	since time.Time
	// lastRequest and lastSSH are Unix nanoseconds; 0 means never.
	lastRequest, lastSSH atomic.Int64
	sshSessions          atomic.Int64
}

// NewRecorder returns a recorder started now; now tells the time (nil means
// time.Now).
func NewRecorder(now func() time.Time) *Recorder {
	if now == nil {
		now = time.Now
	}
	return &Recorder{now: now, since: now()}
}

// Request records a client's HTTP request, or data a client sent on an
// upgraded connection, now.
func (r *Recorder) Request() { storeLatest(&r.lastRequest, r.now()) }

// SSHData records data an SSH client sent now.
func (r *Recorder) SSHData() { storeLatest(&r.lastSSH, r.now()) }

// SSHOpened counts an SSH session that opened.
func (r *Recorder) SSHOpened() { r.sshSessions.Add(1) }

// SSHClosed counts an SSH session that closed.
func (r *Recorder) SSHClosed() { r.sshSessions.Add(-1) }

// Report returns what the recorder has seen.
func (r *Recorder) Report() activity.Report {
	return activity.Report{
		Since:       r.since.UTC(),
		LastRequest: timeOf(r.lastRequest.Load()),
		SSHSessions: int(r.sshSessions.Load()),
		LastSSH:     timeOf(r.lastSSH.Load()),
	}
}

// storeLatest stores t in v unless v holds a later time: concurrent
// recorders never move the time back.
func storeLatest(v *atomic.Int64, t time.Time) {
	n := t.UnixNano()
	for {
		old := v.Load()
		if old >= n || v.CompareAndSwap(old, n) {
			return
		}
	}
}

// timeOf returns the time of Unix nanoseconds n, nil for 0.
func timeOf(n int64) *time.Time {
	if n == 0 {
		return nil
	}
	t := time.Unix(0, n).UTC()
	return &t
}
