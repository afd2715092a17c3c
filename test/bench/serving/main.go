// Command serving measures the overhead of the MLService router
// (cmd/serving-router) in the shape it is deployed in: a client, the router
// and a model server, each a process of its own, talking over loopback
// TCP. The same prediction requests are sent straight to the model server
// and through the router in front of it, with the router's logger off and
// on, in one run.
//
// The model server is the one the serving tests and the demo run
// (test/cluster/modelserver: Python's standard library, a linear model of
// 8 weights, run with -python). A second set of rows puts a
// no-op Go server in its place, which answers the same bytes at once: the
// router's own cost with nothing behind it, the ceiling of what it can
// add. The router is the serving-router binary, built by this program with
// go build (or -router); the logger's sink and the no-op server are this program again in
// processes of their own. This process only sends requests.
//
// The same processes are measured in three layouts, one after the other:
// all sharing all CPUs, where the router takes its CPU from the model
// server's; the model server alone on the last CPU with every other
// process on the others, where the router shares a CPU with the client;
// and the router (with the logger's sink) alone on the last CPU, as the
// router's pods are in a cluster, with the client and the model server
// sharing the others in both paths.
//
// Each path is sent -requests prediction requests by -concurrency clients,
// each client sending its next request when the last is answered, in
// -rounds rounds in which the paths take turns so that a change of load on
// the machine falls on all of them. The figures are p50 and p99 of every
// request's latency, requests/s over the path's time, and the CPU time the
// router and the model server used per request (from /proc). The load
// average is read at each turn.
//
// It reports and asserts nothing: the markdown it prints is what make bench
// writes into docs/benchmarks.md.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/accelstack/accelstack/pkg/serving/routerconfig"
	"github.com/accelstack/accelstack/test/cluster/modelserver"
)

// The names of the router's and the sink's processes.
const (
	routerName = "serving-router"
	sinkName   = "sink"
)

// roleEnv makes this program a helper process, "noop" or "sink", serving
// at the address of its argument.
const roleEnv = "ACCELSTACK_BENCH_SERVING_ROLE"

// The model, its request, and the answer of the no-op server: the Python
// model server's answer to the request, byte for byte.
var (
	modelJSON    = `{"weights": [0.5, -0.25, 1, 2, 0.1, 0.3, -1, 0.7], "bias": 0.2}`
	requestBody  = []byte(`{"instances": [[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]]}`)
	responseBody = []byte(`{"predictions": [1.39], "model": "m", "tag": ""}`)
)

func main() {
	if role := os.Getenv(roleEnv); role != "" && len(os.Args) == 2 {
		if err := helper(role, os.Args[1]); err != nil {
			fmt.Fprintln(os.Stderr, "serving bench helper:", err)
			os.Exit(1)
		}
		return
	}
	requests := flag.Int("requests", 9000, "Requests per path, over all rounds.")
	conc := flag.Int("concurrency", 8, "Clients sending at once.")
	rounds := flag.Int("rounds", 3, "Rounds in which the paths take turns.")
	python := flag.String("python", "/usr/bin/python3", "The Python that runs the model server.")
	routerBin := flag.String("router", "", "The serving-router binary to measure (default: built from this tree).")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *routerBin, *python, *requests, *conc, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "serving bench:", err)
		os.Exit(1)
	}
}

// path is one way to a backend.
type path struct {
	name   string
	url    string
	router *process // nil for the direct path
	lat    []time.Duration
	secs   float64
	model  *process
	cpu    time.Duration // of the router
	mcpu   time.Duration // of the model server
	sink   *process      // the logger's sink; nil with the logger off
	scpu   time.Duration // of the sink
}

// backend is a model server and the paths to it.
type backend struct {
	title string
	paths []*path
}

func run(ctx context.Context, routerBin, python string, requests, conc, rounds int) error {
	dir, err := os.MkdirTemp("", "serving-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var procs []*process
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	start := func(name string, env []string, args ...string) (*process, string, error) {
		addr, err := freeAddr()
		if err != nil {
			return nil, "", err
		}
		_, port, _ := net.SplitHostPort(addr)
		for i, a := range args {
			switch a {
			case "ADDR":
				args[i] = addr
			case "PORT":
				args[i] = port
			}
		}
		p, err := startProcess(dir, name, env, args...)
		if err != nil {
			return nil, "", err
		}
		procs = append(procs, p)
		return p, "http://" + addr, nil
	}

	// The router binary, as its image holds it.
	if routerBin == "" {
		routerBin = filepath.Join(dir, "serving-router")
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", routerBin, "github.com/accelstack/accelstack/cmd/serving-router").CombinedOutput(); err != nil {
			return fmt.Errorf("building serving-router: %w: %s", err, out)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}

	// The model servers and the sink.
	modelDir := filepath.Join(dir, "model")
	script := filepath.Join(dir, "model-server")
	if err := os.MkdirAll(modelDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(modelDir, "model.json"), []byte(modelJSON), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(script, []byte(modelserver.Script), 0o755); err != nil {
		return err
	}
	pyArgs := []string{python, script}
	pyProc, pyURL, err := start("model-server", nil, append(pyArgs, "--port", "PORT", "--model-dir", modelDir, "--name", "m")...)
	if err != nil {
		return err
	}
	noopProc, noopURL, err := start("noop", []string{roleEnv + "=noop"}, self, "ADDR")
	if err != nil {
		return err
	}
	sinkProc, sinkURL, err := start(sinkName, []string{roleEnv + "=sink"}, self, "ADDR")
	if err != nil {
		return err
	}
	for _, u := range []string{pyURL + "/v1/models/m", noopURL, sinkURL} {
		if err := waitReady(ctx, u); err != nil {
			return err
		}
	}

	// A router per backend and logger setting, as an MLService with one
	// release taking all the traffic.
	startRouter := func(backendURL string, logger *routerconfig.Logger) (*path, error) {
		cfg := routerconfig.Config{Name: "bench", Namespace: "bench", PredictHost: "bench-predict", Releases: []routerconfig.Target{
			{Name: "a", Host: "bench-predict-a", URL: backendURL, Weight: 100, Logger: logger},
		}}
		b, err := json.Marshal(cfg)
		if err != nil {
			return nil, err
		}
		p, u, err := start(routerName, []string{routerconfig.EnvConfig + "=" + string(b)}, routerBin, "--address", "ADDR")
		if err != nil {
			return nil, err
		}
		if err := waitReady(ctx, u+routerconfig.HealthPath); err != nil {
			return nil, err
		}
		name := "through the router, logger off"
		if logger != nil {
			name = "through the router, logger on"
		}
		return &path{name: name, url: u, router: p}, nil
	}
	logger := &routerconfig.Logger{URLs: []string{sinkURL}, Mode: routerconfig.ModeAll}
	var backends []*backend
	for _, b := range []struct {
		title, url string
		model      *process
	}{
		{"the Python model server (test/cluster/modelserver)", pyURL, pyProc},
		{"a no-op Go server: the router's own cost ceiling", noopURL, noopProc},
	} {
		off, err := startRouter(b.url, nil)
		if err != nil {
			return err
		}
		on, err := startRouter(b.url, logger)
		if err != nil {
			return err
		}
		off.model, on.model, on.sink = b.model, b.model, sinkProc
		backends = append(backends, &backend{title: b.title, paths: []*path{{name: "direct to the model server", url: b.url, model: b.model}, off, on}})
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 4 * conc, MaxIdleConnsPerHost: 2 * conc, IdleConnTimeout: time.Minute, DisableCompression: true}}
	// Warm up the connections, the router's pools and the Python threads.
	for _, b := range backends {
		for _, p := range b.paths {
			if _, err := load(ctx, client, p.url, conc, 50*conc); err != nil {
				return fmt.Errorf("%s: %s: %w", b.title, p.name, err)
			}
		}
	}
	layouts := []*layout{{title: fmt.Sprintf("All on the machine's %d CPUs, shared", runtime.NumCPU())}}
	if runtime.NumCPU() >= 2 {
		layouts = append(layouts,
			&layout{title: "The model server on a CPU of its own; the client, the router and the sink on the others", alone: []string{pyProc.name, noopProc.name}},
			&layout{title: "The router and the sink on a CPU of their own, as the router's pods in a cluster; the client and the model server on the others", alone: []string{routerName, sinkName}})
	}
	for _, l := range layouts {
		if err := l.pin(procs); err != nil {
			return err
		}
		if err := l.measure(ctx, client, backends, sinkURL, requests, conc, rounds); err != nil {
			return err
		}
	}
	if err := layouts[0].pin(procs); err != nil { // as it was
		return err
	}

	fmt.Printf("The router (cmd/serving-router) in front of a model server, against the same requests sent straight to the model server. The client (this program), the router, the model server and the logger's sink are processes of their own on loopback TCP. Each path: %d prediction requests (%d bytes, answer %d bytes) from %d clients at once, each sending its next request when the last is answered, in %d rounds in which the paths take turns. With the logger on, the router sends every request and response (mode all) to the sink. CPU per request is the CPU time the router's, the model server's and the sink's processes used, over the requests of the path. The same processes are measured in %d layouts of the CPUs, one after the other.\n\n",
		requests/rounds*rounds, len(requestBody), len(responseBody), conc, rounds, len(layouts))
	for _, l := range layouts {
		l.print()
	}
	fmt.Println("Targets: < 1 ms added p99, >= 0.80 of the direct requests/s, logger off and on.")
	return nil
}

// targets says which targets a path through the router misses.
func targets(addedP99 time.Duration, ratio float64) string {
	var missed []string
	if addedP99 >= time.Millisecond {
		missed = append(missed, "added p99 >= 1 ms")
	}
	if ratio < 0.8 {
		missed = append(missed, "ratio < 0.80")
	}
	if len(missed) == 0 {
		return "met"
	}
	return strings.Join(missed, ", ")
}

// process is a child process; its output goes to a file in the run's
// directory.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
}

// startProcess starts args[0] with args[1:] and env added to this
// process's environment; it dies with this process.
func startProcess(dir, name string, env []string, args ...string) (*process, error) {
	log := filepath.Join(dir, fmt.Sprintf("%s-%d.log", name, time.Now().UnixNano()))
	f, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(args[0], args[1:]...) //nolint:gosec // the bench's own binaries
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return &process{name: name, cmd: cmd, log: log}, nil
}

// stop ends p with SIGTERM, or SIGKILL after 5 seconds, and waits for it.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// cpu returns the CPU time p has used; 0 for no process.
func (p *process) cpu() time.Duration {
	if p == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command's name in parentheses: utime and stime are
	// the 12th and 13th, in clock ticks (100 a second on Linux).
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// freeAddr returns a loopback address with a free port.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitReady waits until a GET of url answers 200.
func waitReady(ctx context.Context, url string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s is not ready: %w", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
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

// load sends n requests to url from conc clients and returns their
// latencies.
func load(ctx context.Context, client *http.Client, url string, conc, n int) ([]time.Duration, error) {
	var next atomic.Int64
	lats := make([][]time.Duration, conc)
	errs := make([]error, conc)
	var wg sync.WaitGroup
	for c := range conc {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				start := time.Now()
				if err := predict(ctx, client, url); err != nil {
					errs[c] = err
					return
				}
				lats[c] = append(lats[c], time.Since(start))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(lats...), nil
}

// pct returns the p-th percentile of d.
func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100].Round(time.Microsecond)
}
