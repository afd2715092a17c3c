// Command gateway measures the access gateway (cmd/gateway) beside
// oauth2-proxy v7, each in front of the same upstream, against the same
// requests sent straight to the upstream, in one run on one layout of the
// CPUs.
//
// The gateway is the binary as deployed, against a real kube-apiserver and
// etcd (envtest) holding deploy/'s roles, a project namespace with a
// member and a Notebook whose Service's one ready endpoint is the
// upstream; its requests carry the member's ServiceAccount token.
// oauth2-proxy is the binary make bench-tools builds
// ($ACCELSTACK_OAUTH2_PROXY), with mockoidc, in this program, as its OIDC
// provider; its requests carry the session cookie of a login through
// mockoidc, or an ID token mockoidc issued (--skip-jwt-bearer-tokens). Both
// proxies serve HTTPS with the same certificate, and run alone on the last
// CPU with the same GOMAXPROCS; everything else (this program, the
// upstream, the API server, etcd) on the others.
//
// At each concurrency (-concurrency), each path gets keep-alive clients
// sending GETs one after another for -duration, after -warmup, in -rounds
// rounds in which the paths take turns. Then one WebSocket per path echoes
// -messages messages, one at a time.
//
// Without $ACCELSTACK_OAUTH2_PROXY or $KUBEBUILDER_ASSETS (make bench sets
// both) it prints nothing and says why on standard error. It asserts
// nothing: the markdown it prints is what make bench writes into
// docs/benchmarks.md.
package main

import (
	"context"
	"debug/buildinfo"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// oauth2ProxyEnv names the oauth2-proxy binary.
const oauth2ProxyEnv = "ACCELSTACK_OAUTH2_PROXY"

// options are the bench's flags.
type options struct {
	concurrency      []int
	duration, warmup time.Duration
	rounds           int
	messages         int
	// gateway is the gateway binary; empty builds cmd/gateway.
	gateway string
}

func main() {
	if os.Getenv(roleEnv) == upstreamRole && len(os.Args) == 2 {
		if err := serveUpstream(os.Args[1]); err != nil {
			fmt.Fprintln(os.Stderr, "bench gateway upstream:", err)
			os.Exit(1)
		}
		return
	}
	o := options{}
	conc := flag.String("concurrency", "16,64", "Clients sending at once, comma-separated: one measurement each.")
	flag.DurationVar(&o.duration, "duration", 6*time.Second, "How long each path is measured at each concurrency, over all rounds.")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "How long each path is sent requests at each concurrency before it is measured.")
	flag.IntVar(&o.rounds, "rounds", 3, "Rounds in which the paths take turns.")
	flag.IntVar(&o.messages, "messages", 3000, "WebSocket round trips per path, over all rounds.")
	flag.StringVar(&o.gateway, "gateway", "", "The gateway binary to measure (default: built from this tree).")
	flag.Parse()
	var err error
	if o.concurrency, err = parseCounts(*conc); err != nil || o.rounds < 1 || o.messages < o.rounds || o.duration <= 0 {
		fmt.Fprintln(os.Stderr, "bench gateway: -concurrency takes positive counts, -rounds at least 1, -messages at least -rounds, -duration more than 0:", err)
		os.Exit(2)
	}
	if os.Getenv(oauth2ProxyEnv) == "" || os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintf(os.Stderr, "bench gateway: skipped, needs $%s (make bench-tools builds it) and $KUBEBUILDER_ASSETS (make envtest-assets); make bench sets both\n", oauth2ProxyEnv)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench gateway:", err)
		os.Exit(1)
	}
}

// parseCounts parses a comma-separated list of positive counts.
func parseCounts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// peerName returns "oauth2-proxy" and the module version bin was built
// from, as its --version says nothing when built by go install.
func peerName(bin string) (string, error) {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "", fmt.Errorf("reading the build info of %s: %w", bin, err)
	}
	return "oauth2-proxy " + info.Main.Version, nil
}
