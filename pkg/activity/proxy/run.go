package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/netlimit"
)

// shutdownTimeout bounds the wait for the requests under way at shutdown.
const shutdownTimeout = 5 * time.Second

// Config configures the sidecar.
type Config struct {
	// Address is where the HTTP proxy listens.
	Address string
	// Upstream is the workload's HTTP entry, http://host:port.
	Upstream string
	// SSHAddress is where the SSH forwarder listens; empty means none.
	SSHAddress string
	// SSHUpstream is the SSH server, host:port.
	SSHUpstream string
	// MaxConnections caps the HTTP connections open at once, upgraded ones
	// included; more wait to be accepted.
	MaxConnections int
	// MaxSSHSessions caps the SSH sessions open at once; more are closed.
	MaxSSHSessions int
	// DialTimeout bounds each connection to the upstreams.
	DialTimeout time.Duration
	// AccessTokenFile holds the token a proxied HTTP request must carry
	// (Handler.WithAccessToken); empty means none is needed. It is read
	// once, at the start: a changed token takes a restart.
	AccessTokenFile string
}

// DefaultConfig returns the configuration of a sidecar in front of a
// Jupyter server on port 8888 and an sshd on port 22 of the pod.
func DefaultConfig() Config {
	return Config{
		Address:        fmt.Sprintf(":%d", activity.HTTPPort),
		Upstream:       "http://127.0.0.1:8888",
		SSHAddress:     fmt.Sprintf(":%d", activity.SSHPort),
		SSHUpstream:    "127.0.0.1:22",
		MaxConnections: 256,
		MaxSSHSessions: 64,
		DialTimeout:    5 * time.Second,
	}
}

// Validate returns an error naming the first field (as its flag) at fault.
func (c Config) Validate() error {
	if _, err := c.upstreamURL(); err != nil {
		return err
	}
	if c.Address == "" {
		return errors.New("--address must not be empty")
	}
	if c.SSHAddress != "" {
		if _, _, err := net.SplitHostPort(c.SSHUpstream); err != nil {
			return fmt.Errorf("invalid --ssh-upstream %q: %w", c.SSHUpstream, err)
		}
	}
	if c.MaxConnections < 1 || c.MaxSSHSessions < 1 {
		return errors.New("--max-connections and --max-ssh-sessions must be at least 1")
	}
	if c.DialTimeout <= 0 {
		return errors.New("--dial-timeout must be positive")
	}
	return nil
}

// upstreamURL parses Upstream, which must be http://host:port.
func (c Config) upstreamURL() (*url.URL, error) {
	u, err := url.Parse(c.Upstream)
	if err != nil {
		return nil, fmt.Errorf("invalid --upstream %q: %w", c.Upstream, err)
	}
	if u.Scheme != "http" || u.Port() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("invalid --upstream %q: want http://host:port", c.Upstream)
	}
	u.Path = ""
	return u, nil
}

// Run serves the HTTP proxy and the SSH forwarder of cfg until ctx ends or
// one of them fails.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	upstream, _ := cfg.upstreamURL()
	log := klog.FromContext(ctx)
	rec := NewRecorder(time.Now)
	var token string
	if cfg.AccessTokenFile != "" {
		var err error
		if token, err = ReadToken(cfg.AccessTokenFile); err != nil {
			return err
		}
		log.Info("Requiring the access token of proxied requests", "file", cfg.AccessTokenFile)
	}

	httpLn, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", cfg.Address, err)
	}
	var sshLn net.Listener
	if cfg.SSHAddress != "" {
		if sshLn, err = net.Listen("tcp", cfg.SSHAddress); err != nil {
			_ = httpLn.Close()
			return fmt.Errorf("listening on %s: %w", cfg.SSHAddress, err)
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() {
		defer cancel()
		log.Info("Proxying HTTP", "address", httpLn.Addr().String(), "upstream", upstream.String())
		if err := serveHTTP(ctx, netlimit.NewListener(httpLn, cfg.MaxConnections), NewHandler(rec, upstream, cfg.DialTimeout).WithAccessToken(token)); err != nil {
			errs[0] = fmt.Errorf("serving HTTP: %w", err)
		}
	})
	if sshLn != nil {
		wg.Go(func() {
			defer cancel()
			log.Info("Forwarding SSH", "address", sshLn.Addr().String(), "upstream", cfg.SSHUpstream)
			if err := NewForwarder(rec, cfg.SSHUpstream, cfg.MaxSSHSessions, cfg.DialTimeout).Serve(ctx, sshLn); err != nil {
				errs[1] = fmt.Errorf("forwarding SSH: %w", err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
