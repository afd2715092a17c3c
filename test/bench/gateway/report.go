package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/accelstack/accelstack/test/harness"
)

// The targets.
const (
	// minThroughputRatio is the least the gateway's requests/s may be,
	// divided by oauth2-proxy's.
	minThroughputRatio = 1.0
	// maxWebSocketRatio is the most a round trip through the gateway may
	// take, divided by the direct one (p50).
	maxWebSocketRatio = 1.10
)

// httpRow is what one path measured at one concurrency, over its turns.
type httpRow struct {
	name string
	// proxied is set for a path through a proxy.
	proxied bool
	lat     []time.Duration
	secs    float64
	// cpu is the proxy's CPU time over the path's turns.
	cpu time.Duration
	// conns is the connections the upstream accepted over the turns.
	conns int64
}

// rps returns the requests answered per second.
func (r *httpRow) rps() float64 {
	if r.secs == 0 {
		return 0
	}
	return float64(len(r.lat)) / r.secs
}

// httpTable is the rows of one concurrency: the direct path, the gateway,
// then oauth2-proxy's.
type httpTable struct {
	conc int
	rows []*httpRow
	// loads are the load averages at the turns of the paths.
	loads []float64
}

// wsRow is the round trips of one path's WebSocket.
type wsRow struct {
	name string
	lat  []time.Duration
}

// report is what the bench prints.
type report struct {
	// peer names oauth2-proxy and its version.
	peer string
	// layout says where the processes ran.
	layout string
	// duration and warmup are each path's per concurrency; rounds the
	// turns the duration is split into.
	duration, warmup time.Duration
	rounds           int
	// messages and msgSize are the WebSocket round trips per path and the
	// bytes of each message.
	messages, msgSize int
	http              []*httpTable
	ws                []*wsRow
}

// print writes the report in markdown.
func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "The access gateway (cmd/gateway) beside %s, each in front of the same upstream, against the same requests sent straight to the upstream. "+
		"The gateway runs as deployed: the binary, serving HTTPS, checking a Kubernetes token by a TokenReview and the member's right on the Notebook by a SubjectAccessReview "+
		"against a real kube-apiserver (envtest), each answer kept for its default --cache-ttl of 10s, and dialing the Notebook's Service's ready endpoint. "+
		"%s serves HTTPS with the same certificate, with mockoidc (in this program) as its OIDC provider and its request log off, as the gateway's is by default; "+
		"its cookie session comes from a login through mockoidc (/oauth2/start, the provider's authorization, /oauth2/callback), "+
		"its bearer ID token is one mockoidc issued, which it verifies with --skip-jwt-bearer-tokens. "+
		"The upstream is a Go net/http server answering %d bytes to a GET and echoing WebSocket messages; the direct path is plain HTTP to it, so what the proxies add includes TLS. "+
		"%s "+
		"Each path: keep-alive clients, each sending its next GET when the last is answered, for %s after a warm-up of %s, in %d rounds in which the paths take turns. "+
		"Proxy CPU per request is the proxy's CPU time (from /proc) over the requests of the path; upstream connections opened, those the upstream accepted during the path's turns "+
		"(a proxy that keeps its connections to the upstream opens none once warm).\n\n",
		r.peer, r.peer, len(responseBody), r.layout, r.duration, r.warmup, r.rounds)
	for _, t := range r.http {
		fmt.Fprintf(w, "**%d clients** (load average, 1 minute, at the turns of the paths: %.2f to %.2f):\n\n", t.conc, slices.Min(t.loads), slices.Max(t.loads))
		fmt.Fprintln(w, "| path | requests | p50 | p99 | added p99 | requests/s | ratio to direct | proxy CPU per request | upstream connections opened |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
		direct := t.rows[0]
		for _, row := range t.rows {
			added, cpu := "—", "—"
			if row.proxied {
				added = dur(addedP99(row, direct))
				cpu = dur(perRequest(row.cpu, len(row.lat)))
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %.0f | %.2f | %s | %d |\n", row.name, len(row.lat),
				dur(harness.Percentile(row.lat, 0.5)), dur(harness.Percentile(row.lat, 0.99)), added, row.rps(), ratio(row.rps(), direct.rps()), cpu, row.conns)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "The gateway beside %s:\n\n", r.peer)
	fmt.Fprintln(w, "| clients | against | requests/s, gateway ÷ oauth2-proxy | gateway added p99 | oauth2-proxy added p99 | targets |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, t := range r.http {
		direct, gw := t.rows[0], t.rows[1]
		for _, peer := range t.rows[2:] {
			q := ratio(gw.rps(), peer.rps())
			ga, pa := addedP99(gw, direct), addedP99(peer, direct)
			fmt.Fprintf(w, "| %d | %s | %.2f | %s | %s | %s |\n", t.conc, peer.name, q, dur(ga), dur(pa), httpTargets(q, ga, pa))
		}
	}
	fmt.Fprintln(w)
	if len(r.ws) > 0 {
		fmt.Fprintf(w, "WebSocket: one connection per path, %d round trips of a %d-byte message each, one at a time, after 100 not counted; the paths take turns in %d rounds.\n\n", r.messages, r.msgSize, r.rounds)
		fmt.Fprintln(w, "| path | round trips | p50 | p99 | p50 ratio to direct | p99 ratio to direct | target |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
		direct := r.ws[0]
		d50, d99 := harness.Percentile(direct.lat, 0.5), harness.Percentile(direct.lat, 0.99)
		for i, row := range r.ws {
			p50, p99 := harness.Percentile(row.lat, 0.5), harness.Percentile(row.lat, 0.99)
			q50, q99 := ratio(p50.Seconds(), d50.Seconds()), ratio(p99.Seconds(), d99.Seconds())
			target := "—"
			if i > 0 {
				target = wsTarget(q50)
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s | %.2f | %.2f | %s |\n", row.name, len(row.lat), dur(p50), dur(p99), q50, q99, target)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Targets: the gateway's requests/s at least %.1fx oauth2-proxy's and its added p99 no more than oauth2-proxy's, at each concurrency and against each of oauth2-proxy's credentials; "+
		"a WebSocket round trip through the gateway within %.0f%% of the direct one (p50).\n", minThroughputRatio, (maxWebSocketRatio-1)*100)
}

// addedP99 returns the p99 latency of row less that of direct.
func addedP99(row, direct *httpRow) time.Duration {
	return harness.Percentile(row.lat, 0.99) - harness.Percentile(direct.lat, 0.99)
}

// httpTargets says which HTTP targets the gateway misses against a peer:
// ratio is its requests/s over the peer's, gwAdded and peerAdded their
// added p99s.
func httpTargets(ratio float64, gwAdded, peerAdded time.Duration) string {
	var missed []string
	if ratio < minThroughputRatio {
		missed = append(missed, fmt.Sprintf("requests/s < %.1fx", minThroughputRatio))
	}
	if gwAdded > peerAdded {
		missed = append(missed, "added p99 above oauth2-proxy's")
	}
	if len(missed) == 0 {
		return "met"
	}
	return strings.Join(missed, ", ")
}

// wsTarget says whether a WebSocket round trip whose p50 is ratio times
// the direct one's meets the target.
func wsTarget(ratio float64) string {
	if ratio > maxWebSocketRatio {
		return fmt.Sprintf("p50 more than %.0f%% above direct", (maxWebSocketRatio-1)*100)
	}
	return "met"
}

// ratio returns a/b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// perRequest returns total over n requests, 0 for none.
func perRequest(total time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return total / time.Duration(n)
}

// dur prints d rounded to the microsecond.
func dur(d time.Duration) string { return d.Round(time.Microsecond).String() }
