package main

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestHTTPTargets(t *testing.T) {
	for _, tc := range []struct {
		ratio            float64
		gwAdded, peerAdd time.Duration
		want             string
	}{
		{1.0, time.Millisecond, time.Millisecond, "met"},
		{2.5, -time.Millisecond, 0, "met"},
		{0.99, 0, time.Millisecond, "requests/s < 1.0x"},
		{1.2, 2 * time.Millisecond, time.Millisecond, "added p99 above oauth2-proxy's"},
		{0.5, 2 * time.Millisecond, time.Millisecond, "requests/s < 1.0x, added p99 above oauth2-proxy's"},
	} {
		if got := httpTargets(tc.ratio, tc.gwAdded, tc.peerAdd); got != tc.want {
			t.Errorf("httpTargets(%.2f, %s, %s) = %q, want %q", tc.ratio, tc.gwAdded, tc.peerAdd, got, tc.want)
		}
	}
}

func TestWSTarget(t *testing.T) {
	for ratio, want := range map[float64]string{1.0: "met", 1.1: "met", 0.9: "met", 1.11: "p50 more than 10% above direct", 4: "p50 more than 10% above direct"} {
		if got := wsTarget(ratio); got != want {
			t.Errorf("wsTarget(%.2f) = %q, want %q", ratio, got, want)
		}
	}
}

// latencies returns n latencies of 1..n times unit.
func latencies(n int, unit time.Duration) []time.Duration {
	d := make([]time.Duration, n)
	for i := range d {
		d[i] = time.Duration(i+1) * unit
	}
	return d
}

// TestReportTables: every row of a table has its header's columns, and the
// figures are the rows' percentiles, differences and ratios.
func TestReportTables(t *testing.T) {
	direct := &httpRow{name: "direct", lat: latencies(100, 10*time.Microsecond), secs: 1}
	gw := &httpRow{name: "gateway", proxied: true, lat: latencies(100, 20*time.Microsecond), secs: 2, cpu: 5 * time.Millisecond}
	peer := &httpRow{name: "peer", proxied: true, lat: latencies(50, 30*time.Microsecond), secs: 2, cpu: 10 * time.Millisecond, conns: 48}
	r := &report{
		peer: "oauth2-proxy v0", layout: "Layout.", duration: time.Second, warmup: time.Second, rounds: 1, messages: 100, msgSize: 128,
		http: []*httpTable{{conc: 4, rows: []*httpRow{direct, gw, peer}, loads: []float64{1.5, 0.5}}},
		ws:   []*wsRow{{name: "direct", lat: latencies(100, time.Microsecond)}, {name: "gateway", lat: latencies(100, 2*time.Microsecond)}},
	}
	var b bytes.Buffer
	r.print(&b)
	out := b.String()
	cols := 0
	for l := range strings.SplitSeq(out, "\n") {
		if !strings.HasPrefix(l, "|") {
			cols = 0
			continue
		}
		n := strings.Count(l, "|")
		if cols == 0 {
			cols = n
		} else if n != cols {
			t.Errorf("%d columns in %q, want %d as its header", n-1, l, cols-1)
		}
	}
	for _, want := range []string{
		// p99 of 100 latencies of 20µs steps is the 99th, 1.98ms; direct's
		// 990µs; gateway: 50 requests/s, 0.5 of direct, 50µs of CPU each.
		"| gateway | 100 | 1ms | 1.98ms | 990µs | 50 | 0.50 | 50µs | 0 |",
		// peer: 25 requests/s, p99 the 50th of 30µs steps; 200µs of CPU each.
		"| peer | 50 | 750µs | 1.5ms | 510µs | 25 | 0.25 | 200µs | 48 |",
		"| 4 | peer | 2.00 | 990µs | 510µs | added p99 above oauth2-proxy's |",
		"| gateway | 100 | 100µs | 198µs | 2.00 | 2.00 | p50 more than 10% above direct |",
		"load average, 1 minute, at the turns of the paths: 0.50 to 1.50",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}

func TestParseCounts(t *testing.T) {
	got, err := parseCounts("16, 64")
	if err != nil || len(got) != 2 || got[0] != 16 || got[1] != 64 {
		t.Errorf("parseCounts(16, 64) = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "16,x", "-1"} {
		if _, err := parseCounts(bad); err == nil {
			t.Errorf("parseCounts(%q) took it", bad)
		}
	}
}

// TestEndpointAddress: the upstream's address is one the API server takes
// in an EndpointSlice.
func TestEndpointAddress(t *testing.T) {
	for s, want := range map[string]bool{"192.0.2.2": true, "10.244.0.7": true, "127.0.0.1": false, "169.254.1.1": false, "0.0.0.0": false, "224.0.0.1": false} {
		if got := endpointAddress(netip.MustParseAddr(s)); got != want {
			t.Errorf("endpointAddress(%s) = %t, want %t", s, got, want)
		}
	}
}
