package proxy

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/accelstack/accelstack/pkg/activity"
)

// fakeClock is a settable time, safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func TestRecorder(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
	r := NewRecorder(clock.now)
	if diff := cmp.Diff(activity.Report{Since: t0}, r.Report()); diff != "" {
		t.Errorf("new recorder's report (-want +got):\n%s", diff)
	}

	clock.set(t0.Add(time.Minute))
	r.Request()
	clock.set(t0.Add(2 * time.Minute))
	r.SSHOpened()
	r.SSHOpened()
	r.SSHData()
	r.SSHClosed()
	// A request recorded with an earlier time does not move it back.
	clock.set(t0.Add(30 * time.Second))
	r.Request()

	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
	want := activity.Report{Since: t0, LastRequest: &t1, SSHSessions: 1, LastSSH: &t2}
	if diff := cmp.Diff(want, r.Report()); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}

	b, err := json.Marshal(r.Report())
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"since":"2026-03-01T10:00:00Z","lastRequest":"2026-03-01T10:01:00Z","sshSessions":1,"lastSSH":"2026-03-01T10:02:00Z"}`
	if string(b) != wantJSON {
		t.Errorf("JSON = %s, want %s", b, wantJSON)
	}
}
