// Command gateway is the platform's way in: one HTTPS entry in front of
// every web workload (Notebooks, TensorBoards, Explorers, EventListeners
// and serving hosts), which authenticates each request (a Kubernetes token
// or an API key), authorizes it against the workload's project (a
// SubjectAccessReview) and proxies it to the workload with the workload's
// own access token. It also serves the users' API keys. See package
// gateway.
package main

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/cli/kubeconfig"
	"github.com/accelstack/accelstack/pkg/gateway"
)

func main() {
	fs := cli.NewFlagSet("gateway", "the authenticated entry to the platform's web workloads")
	kubeconfigPath := fs.String("kubeconfig", "", "Path to a kubeconfig; empty means in-cluster or $KUBECONFIG.")
	opts := gateway.DefaultOptions()
	fs.StringVar(&opts.Address, "address", opts.Address, "Address the gateway serves HTTPS at.")
	fs.StringVar(&opts.MetricsAddress, "metrics-address", opts.MetricsAddress, "Address /metrics is served at over HTTP; empty serves none.")
	fs.StringVar(&opts.TLSCertFile, "tls-cert-file", "", "PEM certificate the gateway serves; empty issues a self-signed one at start.")
	fs.StringVar(&opts.TLSKeyFile, "tls-key-file", "", "PEM key of --tls-cert-file.")
	fs.StringVar(&opts.Host, "host", "", "The gateway's host name, where workload paths are served; empty serves them on any host that is not a serving host.")
	fs.StringVar(&opts.ServingDomain, "serving-domain", "", "Domain of the serving hosts <service>.<namespace>.<domain>; empty serves none.")
	fs.StringVar(&opts.Namespace, "namespace", opts.Namespace, "Namespace of the API keys' Secrets.")
	fs.Func("audiences", "Comma-separated audiences a Kubernetes token must be for; empty means the API server's.", func(v string) error {
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				opts.Audiences = append(opts.Audiences, a)
			}
		}
		return nil
	})
	fs.DurationVar(&opts.CacheTTL, "cache-ttl", opts.CacheTTL, "How long an authentication, authorization or upstream is remembered: a revoked right or key works at most this long.")
	fs.IntVar(&opts.CacheSize, "cache-size", opts.CacheSize, "Entries each cache holds.")
	fs.IntVar(&opts.MaxHeaderBytes, "max-header-bytes", opts.MaxHeaderBytes, "Largest request head; a larger one is answered 431.")
	fs.Check(func() error {
		if (opts.TLSCertFile == "") != (opts.TLSKeyFile == "") {
			return fmt.Errorf("--tls-cert-file and --tls-key-file go together")
		}
		if err := cli.Hosts(map[string]string{"host": opts.Host, "serving-domain": opts.ServingDomain}); err != nil {
			return err
		}
		if opts.CacheTTL < 0 || opts.CacheSize < 1 || opts.MaxHeaderBytes < 1024 {
			return fmt.Errorf("--cache-ttl must not be negative, --cache-size must be positive and --max-header-bytes at least 1024")
		}
		return nil
	})
	cli.Main(fs, func(ctx context.Context) error {
		cfg, err := kubeconfig.RESTConfig(*kubeconfigPath)
		if err != nil {
			return err
		}
		return gateway.Run(ctx, cfg, opts, klog.NewKlogr())
	})
}
