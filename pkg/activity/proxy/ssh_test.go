package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/accelstack/accelstack/test/testutil"
)

// echoServer accepts connections on loopback and echoes each line back.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// forwarder serves a Forwarder to upstream on loopback until the test ends.
func forwarder(t *testing.T, upstream string, maxSessions int) (string, *Recorder, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	rec := NewRecorder(clock.now)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewForwarder(rec, upstream, maxSessions, time.Second).Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String(), rec, clock
}

func waitSessions(t *testing.T, rec *Recorder, want int) {
	t.Helper()
	testutil.Eventually(context.Background(), t, 5*time.Second, "SSH sessions", func() (bool, string, error) {
		got := rec.Report().SSHSessions
		return got == want, fmt.Sprintf("%d sessions", got), nil
	})
}

func TestForwarder(t *testing.T) {
	addr, rec, clock := forwarder(t, echoServer(t), 4)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	waitSessions(t, rec, 1)
	if r := rec.Report(); r.LastSSH != nil {
		t.Errorf("lastSSH before any data = %v", r.LastSSH)
	}

	t1 := clock.now().Add(time.Hour)
	clock.set(t1)
	if _, err := io.WriteString(c, "SSH-2.0-OpenSSH_9.6\r\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "SSH-2.0-OpenSSH_9.6\r\n" {
		t.Fatalf("echo = %q, %v", line, err)
	}
	if r := rec.Report(); r.LastSSH == nil || !r.LastSSH.Equal(t1) {
		t.Errorf("lastSSH = %v, want %v", r.LastSSH, t1)
	}
	// Data from the server alone is no activity.
	if r := rec.Report(); r.LastRequest != nil {
		t.Errorf("SSH data counted as an HTTP request: %v", r.LastRequest)
	}

	// The client half-closes: the server's half still arrives, then the
	// session ends.
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("reading to the end after a half-close: %v", err)
	}
	_ = c.Close()
	waitSessions(t, rec, 0)
}

func TestForwarderLimit(t *testing.T) {
	addr, rec, _ := forwarder(t, echoServer(t), 1)
	first, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	waitSessions(t, rec, 1)
	second, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	_ = second.SetDeadline(time.Now().Add(5 * time.Second))
	if n, err := second.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("a session over the limit read %d, %v; want it closed", n, err)
	}
	if got := rec.Report().SSHSessions; got != 1 {
		t.Errorf("sessions = %d, want 1", got)
	}
}

func TestForwarderUpstreamDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	_ = ln.Close()
	addr, rec, _ := forwarder(t, down, 4)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("read with the SSH server down: %v, want EOF", err)
	}
	if got := rec.Report().SSHSessions; got != 0 {
		t.Errorf("sessions = %d, want 0", got)
	}
}

func TestForwarderClosesSessionsOnStop(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	rec := NewRecorder(clock.now)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewForwarder(rec, echoServer(t), 4, time.Second).Serve(ctx, ln) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitSessions(t, rec, 1)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return with a session open")
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("read after stop: %v, want EOF", err)
	}
}
