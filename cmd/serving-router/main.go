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
	var cfg *router.Config
	fs.Check(func() error {
		if opts.QueueSize < 1 || opts.Workers < 1 || opts.SendTimeout <= 0 || opts.MaxLoggedBody < 0 || opts.MaxQueuedBytes < 0 {
			return fmt.Errorf("--queue-size, --workers and --send-timeout must be positive, --max-logged-body and --max-queued-bytes not negative")
		}
		raw := os.Getenv(router.EnvConfig)
		if raw == "" {
			return fmt.Errorf("$%s is empty", router.EnvConfig)
		}
		var err error
		cfg, err = router.ParseConfig([]byte(raw))
		return err
	})
	cli.Main(fs, func(ctx context.Context) error { return router.Run(ctx, addr, cfg, opts) })
}
