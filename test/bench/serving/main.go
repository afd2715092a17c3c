// Command serving measures the overhead of the MLService router
// (pkg/serving/router): the same prediction requests sent straight to a
// model server and through the router in front of it, with the router's
// logger off and on, in one run.
//
// Everything runs in this process on loopback: the model server (an HTTP
// server answering a KServe v1 predict request with a small JSON body), the
// router (router.New behind an http.Server, as cmd/serving-router serves
// it) and, with the logger on, the logger's sink (an HTTP server counting
// the CloudEvents it receives). Latency is measured by one client sending
// requests one after another (p50, p99, and the p99 added to the direct
// path's); throughput by -concurrency clients for -duration. The three
// paths take turns in -rounds rounds, so that a change of load on the
// machine falls on all of them.
//
// It reports and asserts nothing: the markdown it prints is what make bench
// writes into docs/benchmarks.md.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/serving/router"
)

// The request and response of the model server.
var (
	requestBody  = []byte(`{"instances":[[0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8]]}`)
	responseBody = []byte(`{"predictions":[[0.02,0.01,0.9,0.01,0.01,0.01,0.01,0.01,0.01,0.01]]}`)
)

func main() {
	latencyN := flag.Int("requests", 6000, "Sequential requests per path for the latency figures, over all rounds.")
	conc := flag.Int("concurrency", 16, "Clients at once for the throughput figures.")
	duration := flag.Duration("duration", 6*time.Second, "Time per path for the throughput figures, over all rounds.")
	rounds := flag.Int("rounds", 3, "Rounds in which the paths take turns.")
	flag.Parse()
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *latencyN, *conc, *duration, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "serving bench:", err)
		os.Exit(1)
	}
}

// path is one way to the model server.
type path struct {
	name string
	url  string
	lat  []time.Duration
	reqs int64
	secs float64
}

func run(ctx context.Context, latencyN, conc int, duration time.Duration, rounds int) error {
	model, err := serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(responseBody)
	}))
	if err != nil {
		return err
	}
	defer model.Close()
	var events atomic.Int64
	sink, err := serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Header.Get("Ce-Id") != "" {
			events.Add(1)
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	if err != nil {
		return err
	}
	defer sink.Close()

	modelURL := "http://" + model.addr
	plain, plainStats, err := startRouter(ctx, modelURL, nil)
	if err != nil {
		return err
	}
	defer plain.Close()
	logged, loggedStats, err := startRouter(ctx, modelURL, &router.Logger{URLs: []string{"http://" + sink.addr}, Mode: router.ModeAll})
	if err != nil {
		return err
	}
	defer logged.Close()

	paths := []*path{
		{name: "direct to the model server", url: modelURL},
		{name: "through the router, logger off", url: "http://" + plain.addr},
		{name: "through the router, logger on", url: "http://" + logged.addr},
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 4 * conc, MaxIdleConnsPerHost: 2 * conc, IdleConnTimeout: time.Minute}}
	// Warm up the connections and the router's pool.
	for _, p := range paths {
		if _, err := measure(ctx, client, p.url, 200); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	for range rounds {
		for _, p := range paths {
			lat, err := measure(ctx, client, p.url, latencyN/rounds)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			p.lat = append(p.lat, lat...)
			n, secs, err := load(ctx, client, p.url, conc, duration/time.Duration(rounds))
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			p.reqs += n
			p.secs += secs
		}
	}
	// Let the logger drain before counting what the sink received.
	want := 2 * (paths[2].reqs + int64(len(paths[2].lat)) + 200)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		s := loggedStats()
		if s.Sent+s.Failed+s.Dropped >= want {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	ls := loggedStats()
	_ = plainStats

	direct := paths[0]
	dp99 := pct(direct.lat, 99)
	drps := float64(direct.reqs) / direct.secs
	fmt.Printf("The MLService router (pkg/serving/router) in front of an in-process model server on loopback, against the same requests sent straight to it, in %d rounds in which the paths take turns. Latency: one client, %d requests per path one after another; throughput: %d clients for %s per path; the logger sends every request and response (mode all) to an in-process sink.\n\n",
		rounds, len(direct.lat), conc, duration)
	fmt.Println("| path | p50 | p99 | added p99 | requests/s | ratio |")
	fmt.Println("|---|---|---|---|---|---|")
	for i, p := range paths {
		added := "—"
		if i > 0 {
			added = (pct(p.lat, 99) - dp99).Round(time.Microsecond).String()
		}
		rps := float64(p.reqs) / p.secs
		fmt.Printf("| %s | %s | %s | %s | %.0f | %.2f |\n", p.name, pct(p.lat, 50), pct(p.lat, 99), added, rps, rps/drps)
	}
	fmt.Println()
	fmt.Printf("Logger events: %d sent (%d received by the sink), %d failed, %d dropped because the sink fell behind.\n\n", ls.Sent, events.Load(), ls.Failed, ls.Dropped)
	fmt.Println("Target: < 1 ms added p99, >= 0.80 of the direct requests/s.")
	return nil
}

// server is an HTTP server on a loopback port.
type server struct {
	addr string
	srv  *http.Server
}

// Close stops the server.
func (s *server) Close() { _ = s.srv.Close() }

// serve serves h on a free loopback port.
func serve(h http.Handler) (*server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return &server{addr: l.Addr().String(), srv: srv}, nil
}

// startRouter serves a router with one release, all the traffic, to
// modelURL.
func startRouter(ctx context.Context, modelURL string, logger *router.Logger) (*server, func() router.Stats, error) {
	cfg := &router.Config{Name: "bench", Namespace: "bench", PredictHost: "bench-predict", Releases: []router.Target{
		{Name: "a", Host: "bench-predict-a", URL: modelURL, Weight: 100, Logger: logger},
	}}
	r, err := router.New(ctx, cfg, router.DefaultOptions())
	if err != nil {
		return nil, nil, err
	}
	s, err := serve(r)
	if err != nil {
		return nil, nil, err
	}
	return s, r.Stats, nil
}

// predict sends one prediction request to url.
func predict(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/models/m:predict", bytes.NewReader(requestBody))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Equal(b, responseBody) {
		return fmt.Errorf("POST %s: %s %q", url, resp.Status, b)
	}
	return nil
}

// measure times n requests sent one after another.
func measure(ctx context.Context, client *http.Client, url string, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := predict(ctx, client, url); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// load sends requests from conc clients for d and returns how many
// completed and the seconds they took.
func load(ctx context.Context, client *http.Client, url string, conc int, d time.Duration) (int64, float64, error) {
	var n atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, conc)
	start := time.Now()
	end := start.Add(d)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				if err := predict(ctx, client, url); err != nil {
					errs <- err
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, err
	}
	return n.Load(), secs, nil
}

// pct returns the p-th percentile of d.
func pct(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100].Round(time.Microsecond)
}
