package executor

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// probeEndpoint checks within timeout that a TCP connection to u (or to the
// proxy the environment names for it) can be opened, so that an unreachable
// endpoint fails fast with a clear message instead of after the client's
// retries.
func probeEndpoint(ctx context.Context, u *url.URL, timeout time.Duration) error {
	target := u
	req := &http.Request{URL: u}
	if proxy, err := http.ProxyFromEnvironment(req); err == nil && proxy != nil {
		target = proxy
	}
	host := target.Host
	if target.Port() == "" {
		port := "80"
		if target.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(target.Hostname(), port)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
	if err != nil {
		via := ""
		if target != u {
			via = " through proxy " + target.Redacted()
		}
		return fmt.Errorf("endpoint %s is unreachable%s: %w", u.Redacted(), via, err)
	}
	return conn.Close()
}
