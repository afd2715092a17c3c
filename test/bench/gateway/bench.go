package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"golang.org/x/net/websocket"

	"github.com/accelstack/accelstack/test/harness"
)

// wsMessageSize is the size of each WebSocket message.
const wsMessageSize = 128

// wsWarmup is the number of WebSocket round trips not counted.
const wsWarmup = 100

// run starts the upstream, the control plane, both proxies and the OIDC
// provider, measures every path and prints the report.
func run(ctx context.Context, o options) (err error) {
	peer, err := peerName(os.Getenv(oauth2ProxyEnv))
	if err != nil {
		return err
	}
	layout := newLayout()
	if err := layout.pinSelf(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-gateway-")
	if err != nil {
		return fmt.Errorf("making the run's directory: %w", err)
	}
	defer os.RemoveAll(dir)
	var stops []func() error
	defer func() {
		for _, s := range stops {
			err = errors.Join(err, s())
		}
	}()
	tf, err := issueTLS(dir)
	if err != nil {
		return err
	}

	// The upstream, at an address an EndpointSlice may hold.
	ip, err := podAddress()
	if err != nil {
		return err
	}
	port, err := harness.FreePort()
	if err != nil {
		return err
	}
	upAddr := netip.AddrPortFrom(ip, uint16(port))
	upURL := "http://" + upAddr.String()
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program: %w", err)
	}
	up, err := harness.RunProcess("upstream", self, []string{upAddr.String()}, filepath.Join(dir, "upstream.log"), roleEnv+"="+upstreamRole)
	if err != nil {
		return fmt.Errorf("starting the upstream: %w", err)
	}
	stops = append(stops, up.Stop)
	if err := up.WaitReady(30*time.Second, probe(tf, upURL+statusPath)); err != nil {
		return err
	}

	// The gateway, against a control plane of its own.
	fmt.Fprintln(os.Stderr, "bench gateway: starting the control plane and the gateway")
	gwBin := o.gateway
	if gwBin == "" {
		if gwBin, err = harness.BuildCmd("gateway"); err != nil {
			return err
		}
	}
	cl, err := startCluster(ctx, dir, upAddr)
	if err != nil {
		return err
	}
	stops = append([]func() error{cl.stop}, stops...)
	gw, gwURL, err := startGateway(dir, gwBin, cl, tf, layout.proxyEnv())
	if err != nil {
		return err
	}
	stops = append([]func() error{gw.Stop}, stops...)

	// oauth2-proxy, with mockoidc as its provider.
	oidc, err := mockoidc.Run()
	if err != nil {
		return fmt.Errorf("starting mockoidc: %w", err)
	}
	stops = append([]func() error{oidc.Shutdown}, stops...)
	o2p, o2pURL, err := startOAuth2Proxy(dir, os.Getenv(oauth2ProxyEnv), oidc, upURL, tf, layout.proxyEnv())
	if err != nil {
		return err
	}
	stops = append([]func() error{o2p.Stop}, stops...)
	cookie, err := login(ctx, tf, o2pURL)
	if err != nil {
		return err
	}
	idt, err := idToken(ctx, oidc)
	if err != nil {
		return err
	}

	conns := slices.Max(o.concurrency)
	paths := []*path{
		newPath("direct to the upstream", upURL, nil, nil, tf, conns),
		newPath("gateway, Kubernetes token", gwURL, http.Header{"Authorization": {"Bearer " + cl.memberToken}}, gw, tf, conns),
		newPath(peer+", cookie session", o2pURL, http.Header{"Cookie": {cookie}}, o2p, tf, conns),
		newPath(peer+", bearer ID token", o2pURL, http.Header{"Authorization": {"Bearer " + idt}}, o2p, tf, conns),
	}
	for _, p := range paths {
		if err := p.get(ctx); err != nil {
			return err
		}
	}
	for _, p := range paths[1:3] {
		if err := refused(ctx, p); err != nil {
			return err
		}
	}
	for _, p := range []*harness.Process{gw, o2p} {
		if err := layout.pinProxy(p.Pid()); err != nil {
			return err
		}
	}
	r := &report{peer: peer, layout: layout.String(), duration: o.duration, warmup: o.warmup, rounds: o.rounds, messages: o.messages, msgSize: wsMessageSize}
	for _, conc := range o.concurrency {
		t, err := measureHTTP(ctx, paths, layout, conc, o)
		if err != nil {
			return err
		}
		r.http = append(r.http, t)
	}
	if r.ws, err = measureWebSocket(paths[:3], o); err != nil {
		return err
	}
	r.print(os.Stdout)
	return nil
}

// refused checks that p's proxy answers a request without its credential
// with no 200, and without redirects followed.
func refused(ctx context.Context, p *path) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+statusPath, nil)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: p.client.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s without its credential: %w", p.name, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return fmt.Errorf("%s answered a request without its credential", p.name)
	}
	return nil
}

// measureHTTP measures every path at conc clients: a warm-up, then the
// rounds in which the paths take turns.
func measureHTTP(ctx context.Context, paths []*path, layout cpuLayout, conc int, o options) (*httpTable, error) {
	fmt.Fprintf(os.Stderr, "bench gateway: %d clients\n", conc)
	t := &httpTable{conc: conc}
	for _, p := range paths {
		if _, _, err := p.load(ctx, conc, o.warmup); err != nil {
			return nil, err
		}
		t.rows = append(t.rows, &httpRow{name: p.name, proxied: p.proxy != nil})
	}
	for range o.rounds {
		for i, p := range paths {
			row := t.rows[i]
			var cpu0 time.Duration
			if p.proxy != nil {
				// Threads started since are placed again.
				if err := layout.pinProxy(p.proxy.Pid()); err != nil {
					return nil, err
				}
				var err error
				if cpu0, err = harness.ProcessCPU(p.proxy.Pid()); err != nil {
					return nil, err
				}
			}
			t.loads = append(t.loads, harness.LoadAverage())
			conns0, err := upstreamConnections(ctx, paths[0])
			if err != nil {
				return nil, err
			}
			lat, secs, err := p.load(ctx, conc, o.duration/time.Duration(o.rounds))
			if err != nil {
				return nil, err
			}
			conns1, err := upstreamConnections(ctx, paths[0])
			if err != nil {
				return nil, err
			}
			row.conns += conns1 - conns0
			if p.proxy != nil {
				cpu1, err := harness.ProcessCPU(p.proxy.Pid())
				if err != nil {
					return nil, err
				}
				row.cpu += cpu1 - cpu0
			}
			row.lat = append(row.lat, lat...)
			row.secs += secs
		}
	}
	t.loads = append(t.loads, harness.LoadAverage())
	return t, nil
}

// measureWebSocket opens a WebSocket per path and times o.messages round
// trips on each, the paths taking turns in o.rounds rounds.
func measureWebSocket(paths []*path, o options) ([]*wsRow, error) {
	fmt.Fprintln(os.Stderr, "bench gateway: WebSocket round trips")
	msg := bytes.Repeat([]byte("x"), wsMessageSize)
	conns := make([]*websocket.Conn, len(paths))
	defer func() {
		for _, ws := range conns {
			if ws != nil {
				_ = ws.Close()
			}
		}
	}()
	rows := make([]*wsRow, len(paths))
	for i, p := range paths {
		ws, err := p.dialWebSocket()
		if err != nil {
			return nil, err
		}
		conns[i] = ws
		if _, err := roundTrips(ws, msg, wsWarmup); err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		rows[i] = &wsRow{name: p.name}
	}
	for range o.rounds {
		for i, ws := range conns {
			lat, err := roundTrips(ws, msg, o.messages/o.rounds)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", paths[i].name, err)
			}
			rows[i].lat = append(rows[i].lat, lat...)
		}
	}
	return rows, nil
}
