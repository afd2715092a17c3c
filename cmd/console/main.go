// Command console serves the platform's web consoles (the Build Console at
// /t9k/build-console/) behind the gateway, which logs the user in and
// serves the Kubernetes API the pages call as the user. It holds no
// credentials and talks to no API server itself. See package console.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/console"
)

func main() {
	fs := cli.NewFlagSet("console", "the platform's web consoles")
	address := fs.String("address", ":8080", "Address the consoles are served at over HTTP, for the gateway.")
	cli.Main(fs, func(ctx context.Context) error {
		h, err := console.NewHandler(console.DefaultConfig())
		if err != nil {
			return err
		}
		return serve(ctx, *address, h)
	})
}

// serve serves h and the health checks at address until ctx ends.
func serve(ctx context.Context, address string, h http.Handler) error {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }
	mux.HandleFunc("GET /healthz", ok)
	mux.HandleFunc("GET /readyz", ok)
	mux.Handle("/", h)
	srv := &http.Server{
		Addr:              address,
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errs := make(chan error, 1)
	go func() { errs <- srv.ListenAndServe() }()
	klog.InfoS("Serving", "address", address, "prefix", console.BuildPrefix)
	var err error
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}
