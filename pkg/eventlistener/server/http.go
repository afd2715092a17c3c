package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// shutdownTimeout bounds the wait for the requests under way at shutdown.
const shutdownTimeout = 10 * time.Second

// Mux returns a handler serving serverconfig.HealthzPath,
// serverconfig.ReadyzPath (ready while ready holds) and everything else
// with h.
func Mux(h http.Handler, ready *atomic.Bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+serverconfig.HealthzPath, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("GET "+serverconfig.ReadyzPath, func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	mux.Handle("/", h)
	return mux
}

// Serve serves h on addr with the health endpoints until ctx ends, then
// stops taking requests and waits a while for those under way.
func Serve(ctx context.Context, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ServeListener(ctx, ln, h)
}

// ServeListener is Serve on ln.
func ServeListener(ctx context.Context, ln net.Listener, h http.Handler) error {
	log := klog.FromContext(ctx)
	var ready atomic.Bool
	ready.Store(true)
	srv := &http.Server{
		Handler:           Mux(h, &ready),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    64 << 10,
		// Requests under way at shutdown finish: their context does not
		// end with ctx.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("Serving", "address", ln.Addr().String())
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	ready.Store(false)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}
