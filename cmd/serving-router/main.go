// Command serving-router is the router of an MLService: a reverse proxy
// that splits the global URL's requests between the default and canary
// releases by weight, serves each release's URL, and sends the requests
// and responses of releases with a logger as CloudEvents. Its routes come
// as JSON in $ROUTER_CONFIG, which the MLService controller writes. See
// package router.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/serving/router"
	"github.com/accelstack/accelstack/pkg/serving/routerconfig"
)

func main() {
	fs := cli.NewFlagSet("serving-router", "the router of MLServices: traffic split and request logging")
	opts := router.DefaultOptions()
	addr := ":8080"
	fs.StringVar(&addr, "address", addr, "Address the router serves.")
	fs.IntVar(&opts.QueueSize, "queue-size", opts.QueueSize, "Events waiting for each logger URL; more are dropped.")
	fs.IntVar(&opts.Workers, "workers", opts.Workers, "Events sent to each logger URL at once.")
	fs.DurationVar(&opts.SendTimeout, "send-timeout", opts.SendTimeout, "Limit of one delivery of an event.")
	fs.IntVar(&opts.MaxLoggedBody, "max-logged-body", opts.MaxLoggedBody, "Largest body, in bytes, an event carries.")
	fs.IntVar(&opts.MaxQueuedBytes, "max-queued-bytes", opts.MaxQueuedBytes, "Bytes of event bodies waiting for each logger URL; more are dropped.")
	fs.Int64Var(&opts.MaxLoggedBytesInFlight, "max-logged-bytes-in-flight", opts.MaxLoggedBytesInFlight,
		"Bytes of request and response bodies held for events by the requests being served; a body that does not fit is proxied and its event carries none.")
	fs.DurationVar(&opts.ReadHeaderTimeout, "read-header-timeout", opts.ReadHeaderTimeout, "Limit of reading a request's head; 0 for none.")
	fs.DurationVar(&opts.ReadTimeout, "read-timeout", opts.ReadTimeout, "Limit of reading a whole request, body included; 0 for none.")
	fs.DurationVar(&opts.IdleTimeout, "idle-timeout", opts.IdleTimeout, "Kept client connections without a request for this long are closed; 0 for none.")
	fs.IntVar(&opts.MaxConns, "max-conns", opts.MaxConns, "Client connections open at once; more wait to be accepted. 0 for no limit.")
	var cfg *routerconfig.Config
	fs.Check(func() error {
		if opts.QueueSize < 1 || opts.Workers < 1 || opts.SendTimeout <= 0 || opts.MaxLoggedBody < 0 || opts.MaxQueuedBytes < 0 {
			return fmt.Errorf("--queue-size, --workers and --send-timeout must be positive, --max-logged-body and --max-queued-bytes not negative")
		}
		if opts.MaxLoggedBytesInFlight < 0 || opts.ReadHeaderTimeout < 0 || opts.ReadTimeout < 0 || opts.IdleTimeout < 0 || opts.MaxConns < 0 {
			return fmt.Errorf("--max-logged-bytes-in-flight, --read-header-timeout, --read-timeout, --idle-timeout and --max-conns must not be negative")
		}
		raw := os.Getenv(routerconfig.EnvConfig)
		if raw == "" {
			return fmt.Errorf("$%s is empty", routerconfig.EnvConfig)
		}
		var err error
		cfg, err = routerconfig.ParseConfig([]byte(raw))
		return err
	})
	cli.Main(fs, func(ctx context.Context) error { return router.Run(ctx, addr, cfg, opts) })
}
