package router

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/netlimit"
	"github.com/accelstack/accelstack/pkg/serving/routerconfig"
)

// Run serves a router for cfg at addr until ctx ends, then shuts down
// gracefully.
func Run(ctx context.Context, addr string, cfg *routerconfig.Config, opts Options) error {
	r, err := New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening at %s: %w", addr, err)
	}
	srv := newServer(withHealth(r), opts)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(netlimit.Limit(l, opts.MaxConns)) }()
	klog.FromContext(ctx).Info("Serving", "address", addr, "mlservice", cfg.Name, "releases", len(cfg.Releases),
		"maxConns", opts.MaxConns, "readTimeout", opts.ReadTimeout, "idleTimeout", opts.IdleTimeout)
	select {
	case err := <-errc:
		return fmt.Errorf("serving %s: %w", addr, err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

// newServer returns the server of h with the timeouts of opts. A client
// that trickles its request is cut at ReadTimeout, and a kept connection
// without a request at IdleTimeout; there is no write timeout, as a
// prediction may stream its answer for long.
func newServer(h http.Handler, opts Options) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: opts.ReadHeaderTimeout,
		ReadTimeout:       opts.ReadTimeout,
		IdleTimeout:       opts.IdleTimeout,
	}
}

// withHealth serves routerconfig.HealthPath itself and everything else with r.
func withHealth(r *Router) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == routerconfig.HealthPath {
			w.WriteHeader(http.StatusOK)
			return
		}
		r.ServeHTTP(w, req)
	})
}
