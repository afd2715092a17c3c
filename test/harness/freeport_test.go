package harness

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePortOutsideEphemeralRange checks that FreePort's ports lie below
// the kernel's range for outgoing connections and can be bound.
func TestFreePortOutsideEphemeralRange(t *testing.T) {
	for range 20 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < freePortLow || port >= freePortHigh {
			t.Errorf("FreePort = %d, want a port in [%d, %d)", port, freePortLow, freePortHigh)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("binding port %d from FreePort: %v", port, err)
		}
		l.Close()
	}
}
