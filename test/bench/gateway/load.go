package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/websocket"
	"golang.org/x/sys/unix"

	"github.com/accelstack/accelstack/test/harness"
)

// path is one way to the upstream: straight to it, or through a proxy
// with a credential.
type path struct {
	name string
	// base is the URL of the upstream or the proxy.
	base string
	// header holds the credential.
	header http.Header
	client *http.Client
	tls    *tls.Config
	// proxy is the proxy's process; nil for the direct path.
	proxy *harness.Process
}

// newPath returns a path to base whose client keeps up to conns
// connections and trusts tf's certificate.
func newPath(name, base string, header http.Header, proxy *harness.Process, tf tlsFiles, conns int) *path {
	tc := &tls.Config{RootCAs: tf.pool, MinVersion: tls.VersionTLS12}
	// A TLS configuration of its own keeps the transport on HTTP/1.1, as
	// both proxies serve only that.
	tr := &http.Transport{TLSClientConfig: tc, MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute, DisableCompression: true}
	return &path{name: name, base: base, header: header, client: &http.Client{Transport: tr}, tls: tc, proxy: proxy}
}

// get sends one GET of the status path and checks the upstream's answer.
func (p *path) get(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+statusPath, nil)
	if err != nil {
		return err
	}
	addHeader(req.Header, p.header)
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Equal(b, responseBody) {
		return fmt.Errorf("GET %s: %s %.200q", p.base+statusPath, resp.Status, b)
	}
	return nil
}

// upstreamConnections asks the upstream, over the direct path p, how many
// connections it has accepted.
func upstreamConnections(ctx context.Context, p *path) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+connectionsPath, nil)
	if err != nil {
		return 0, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("asking the upstream for its connections: %w", err)
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return 0, fmt.Errorf("asking the upstream for its connections: %w", err)
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the upstream's connections: %s %q: %w", resp.Status, b, err)
	}
	return n, nil
}

// addHeader adds the values of src to dst.
func addHeader(dst, src http.Header) {
	for k, v := range src {
		dst[k] = append(dst[k], v...)
	}
}

// load sends GETs from conc clients, each sending its next request when
// the last is answered, for d, and returns the latencies and the seconds
// until the last answer.
func (p *path) load(ctx context.Context, conc int, d time.Duration) ([]time.Duration, float64, error) {
	lats := make([][]time.Duration, conc)
	errs := make([]error, conc)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for c := range conc {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				t := time.Now()
				if err := p.get(ctx); err != nil {
					errs[c] = err
					return
				}
				lats[c] = append(lats[c], time.Since(t))
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if err := errors.Join(errs...); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", p.name, err)
	}
	return slices.Concat(lats...), secs, nil
}

// dialWebSocket opens a WebSocket to the channels path, with the path's
// credential.
func (p *path) dialWebSocket() (*websocket.Conn, error) {
	u := "ws" + strings.TrimPrefix(p.base, "http") + channelsPath
	cfg, err := websocket.NewConfig(u, p.base)
	if err != nil {
		return nil, err
	}
	addHeader(cfg.Header, p.header)
	cfg.TlsConfig = p.tls
	cfg.Dialer = &net.Dialer{Timeout: 10 * time.Second}
	ws, err := websocket.DialConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: opening a WebSocket: %w", p.name, err)
	}
	return ws, nil
}

// roundTrips sends n messages of msg over ws, each once the last came
// back, and returns each round trip's time.
func roundTrips(ws *websocket.Conn, msg []byte, n int) ([]time.Duration, error) {
	lats := make([]time.Duration, 0, n)
	var back []byte
	for range n {
		t := time.Now()
		if err := websocket.Message.Send(ws, msg); err != nil {
			return nil, fmt.Errorf("sending a message: %w", err)
		}
		if err := websocket.Message.Receive(ws, &back); err != nil {
			return nil, fmt.Errorf("receiving a message: %w", err)
		}
		lats = append(lats, time.Since(t))
		if !bytes.Equal(back, msg) {
			return nil, fmt.Errorf("the echo of %d bytes came back as %d bytes", len(msg), len(back))
		}
	}
	return lats, nil
}

// cpuLayout places the processes: each proxy alone on the last CPU, as a
// proxy's pod is on a node; this program (the client and the OIDC
// provider), the upstream, the API server and etcd on the others. On one
// CPU all share it.
type cpuLayout struct {
	others, last unix.CPUSet
	split        bool
}

// newLayout returns the layout of this machine's CPUs.
func newLayout() cpuLayout {
	n := runtime.NumCPU()
	l := cpuLayout{split: n >= 2}
	for c := range n {
		if c == n-1 && l.split {
			l.last.Set(c)
		} else {
			l.others.Set(c)
		}
	}
	return l
}

// proxyEnv is the environment of the proxies: GOMAXPROCS of the CPUs they
// run on, the same for both.
func (l cpuLayout) proxyEnv() []string {
	if !l.split {
		return nil
	}
	return []string{"GOMAXPROCS=" + strconv.Itoa(l.last.Count())}
}

// pinSelf places this program's threads, and so the processes it starts
// from then on, on the CPUs other than the proxies'.
func (l cpuLayout) pinSelf() error {
	if !l.split {
		return nil
	}
	return harness.SetAffinity(os.Getpid(), &l.others)
}

// pinProxy places the threads of the proxy pid on the proxies' CPU.
func (l cpuLayout) pinProxy(pid int) error {
	if !l.split {
		return nil
	}
	return harness.SetAffinity(pid, &l.last)
}

// String describes the layout for the report.
func (l cpuLayout) String() string {
	if !l.split {
		return "All the processes share the machine's one CPU."
	}
	return fmt.Sprintf("Each proxy runs alone on CPU %s with GOMAXPROCS=%d, as a proxy's pod on a node; the client (this program), mockoidc, the upstream, kube-apiserver and etcd share CPU %s, on both proxies' paths and the direct one alike.",
		cpuList(&l.last), l.last.Count(), cpuList(&l.others))
}

// cpuList lists the CPUs of set: "0", "0, 1".
func cpuList(set *unix.CPUSet) string {
	var cpus []string
	for c := range runtime.NumCPU() {
		if set.IsSet(c) {
			cpus = append(cpus, strconv.Itoa(c))
		}
	}
	return strings.Join(cpus, ", ")
}
