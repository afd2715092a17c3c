package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/websocket"
)

// roleEnv makes this program the upstream, serving at the address of its
// argument.
const roleEnv = "ACCELSTACK_BENCH_GATEWAY_ROLE"

// upstreamRole is the value of roleEnv that makes the upstream.
const upstreamRole = "upstream"

// statusPath is the path every HTTP request asks for: a Notebook's
// Jupyter status, on the gateway's route to the bench's Notebook. The
// direct path and oauth2-proxy send the same path; the upstream answers
// it whatever it is.
const statusPath = "/t9k/notebooks/projects/" + benchNamespace + "/name/" + notebookName + "/api/status"

// channelsPath is where the WebSocket connections go: a kernel's channels,
// on the same route.
const channelsPath = "/t9k/notebooks/projects/" + benchNamespace + "/name/" + notebookName + "/api/kernels/k/channels"

// connectionsPath is where the upstream tells how many connections it
// has accepted; the bench asks it straight, never through a proxy.
const connectionsPath = "/bench/connections"

// responseBody is the upstream's answer to every HTTP request, the size
// of a Jupyter status.
var responseBody = []byte(`{"started": "2026-01-01T00:00:00.000000Z", "last_activity": "2026-01-01T00:00:00.000000Z", "connections": 1, "kernels": 1}`)

// serveUpstream serves at addr: the WebSocket echo to an upgrade, the
// count of connections accepted at connectionsPath, and responseBody to
// any other request.
func serveUpstream(addr string) error {
	echo := websocket.Server{Handler: func(ws *websocket.Conn) { _, _ = io.Copy(ws, ws) }}
	var conns atomic.Int64
	srv := &http.Server{
		Addr: addr,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
				echo.ServeHTTP(w, r)
				return
			}
			if r.URL.Path == connectionsPath {
				_, _ = io.WriteString(w, strconv.FormatInt(conns.Load(), 10))
				return
			}
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(responseBody)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, state http.ConnState) {
			if state == http.StateNew {
				conns.Add(1)
			}
		},
	}
	if err := srv.ListenAndServe(); err != nil {
		return fmt.Errorf("serving the upstream at %s: %w", addr, err)
	}
	return nil
}

// podAddress returns an address of this machine that an EndpointSlice may
// hold, for the upstream to serve at: the gateway dials the addresses of
// the EndpointSlices of a workload's Service, and the API server refuses
// loopback addresses there. Connections to it still stay on this machine.
func podAddress() (netip.Addr, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("listing the network interfaces: %w", err)
	}
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			return netip.Addr{}, fmt.Errorf("the addresses of %s: %w", iface.Name, err)
		}
		for _, a := range addrs {
			p, err := netip.ParsePrefix(a.String())
			if err != nil {
				continue
			}
			if ip := p.Addr(); ip.Is4() && endpointAddress(ip) {
				return ip, nil
			}
		}
	}
	return netip.Addr{}, errors.New("this machine has no IPv4 address but loopback and link-local ones, and an EndpointSlice may not hold those")
}

// endpointAddress reports whether the API server takes ip as an
// endpoint's address: not unspecified, loopback, link-local or multicast.
func endpointAddress(ip netip.Addr) bool {
	return ip.IsValid() && !ip.IsUnspecified() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() &&
		!ip.IsLinkLocalMulticast() && !ip.IsMulticast()
}
