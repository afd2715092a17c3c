package router

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"
)

// TestSpreadDialer: connections to a name with two addresses reach both,
// and an address that refuses is passed over.
func TestSpreadDialer(t *testing.T) {
	a, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	port := strconv.Itoa(a.Addr().(*net.TCPAddr).Port)
	b, err := net.Listen("tcp", "127.0.0.2:"+port)
	if err != nil {
		t.Skipf("no second loopback address on port %s: %v", port, err)
	}
	defer b.Close()
	accepted := map[string]int{}
	for _, l := range []net.Listener{a, b} {
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	ips := []string{"127.0.0.1", "127.0.0.2"}
	d := &spreadDialer{dialer: net.Dialer{Timeout: time.Second}, lookup: func(_ context.Context, host string) ([]string, error) {
		if host != "model-private.ns.svc.cluster.local" {
			t.Errorf("looked up %q", host)
		}
		return append([]string(nil), ips...), nil
	}}
	ctx := context.Background()
	for range 64 {
		c, err := d.DialContext(ctx, "tcp", "model-private.ns.svc.cluster.local:"+port)
		if err != nil {
			t.Fatal(err)
		}
		host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
		accepted[host]++
		c.Close()
	}
	if accepted["127.0.0.1"] == 0 || accepted["127.0.0.2"] == 0 {
		t.Errorf("64 connections reached %v, want both addresses", accepted)
	}

	// 127.0.0.3 listens on nothing: every dial ends at a listening address.
	ips = []string{"127.0.0.3", "127.0.0.1"}
	for range 16 {
		c, err := d.DialContext(ctx, "tcp", "model-private.ns.svc.cluster.local:"+port)
		if err != nil {
			t.Fatalf("dial with one refusing address: %v", err)
		}
		c.Close()
	}
	ips = nil
	if _, err := d.DialContext(ctx, "tcp", "model-private.ns.svc.cluster.local:"+port); err == nil {
		t.Error("a name without addresses dialled")
	}
}
