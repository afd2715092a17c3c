package reclaimtest

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Network routes the addresses of pods (pod IP and port) to the test's
// servers, so that the Keeper reaches them at the addresses it builds from
// the pods. An address with no route is refused.
type Network struct {
	mu     sync.Mutex
	routes map[string]string
}

// NewNetwork returns a Network with no routes.
func NewNetwork() *Network { return &Network{routes: map[string]string{}} }

// Route sends connections to ip:port to addr (host:port); an empty addr
// removes the route.
func (n *Network) Route(ip string, port int, addr string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	key := net.JoinHostPort(ip, strconv.Itoa(port))
	if addr == "" {
		delete(n.routes, key)
		return
	}
	n.routes[key] = addr
}

// refused is an address nothing listens on.
const refused = "127.0.0.1:1"

// Client returns an HTTP client dialing through the routes, each call
// bounded by timeout.
func (n *Network) Client(timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: timeout}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				n.mu.Lock()
				to, ok := n.routes[addr]
				n.mu.Unlock()
				if !ok {
					to = refused
				}
				return d.DialContext(ctx, network, to)
			},
		},
	}
}
