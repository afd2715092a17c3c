package netlimit

import (
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// countingListener counts the connections taken from the kernel.
type countingListener struct {
	net.Listener
	accepted atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// waitFor polls cond for up to 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestListener: with two connections open, a third is not taken from the
// kernel until one of them closes; closing a connection twice frees one
// slot; closing the listener ends a waiting Accept; accepted connections
// keep CloseWrite.
func TestListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingListener{Listener: inner}
	l := NewListener(counting, 2)
	defer func() { _ = l.Close() }()
	for range 4 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
	}
	first, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := first.(interface{ CloseWrite() error }); !ok {
		t.Error("an accepted connection lost CloseWrite")
	}
	if _, err := l.Accept(); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 2)
	accept := func() {
		_, err := l.Accept()
		got <- err
	}
	go accept()
	waitFor(t, "an Accept waiting for a slot", func() bool { return l.Waiting() == 1 })
	if n := counting.accepted.Load(); n != 2 {
		t.Fatalf("%d connections taken with a limit of 2", n)
	}
	_ = first.Close()
	_ = first.Close()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if n := counting.accepted.Load(); n != 3 {
		t.Errorf("%d connections taken after one closed, want 3", n)
	}
	go accept()
	waitFor(t, "an Accept waiting for a slot", func() bool { return l.Waiting() == 1 })
	if n := counting.accepted.Load(); n != 3 {
		t.Errorf("%d connections taken after one closed twice, want 3", n)
	}
	_ = l.Close()
	if err := <-got; err == nil {
		t.Error("a waiting Accept went on after the listener closed")
	}
}

// TestLimitNone: a limit of 0 or less leaves the listener as it is.
func TestLimitNone(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = inner.Close() }()
	if got := Limit(inner, 0); got != inner {
		t.Errorf("Limit(ln, 0) = %T, want ln itself", got)
	}
	if _, ok := Limit(inner, 3).(*Listener); !ok {
		t.Error("Limit(ln, 3) does not limit")
	}
}
