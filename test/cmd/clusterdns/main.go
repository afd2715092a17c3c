// Command clusterdns is the DNS server of the local cluster (package
// test/cluster/dns): Service and endpoint names under the cluster domain
// from the API server, other names from the host's resolvers. The local
// cluster builds and starts it; the kubelet points pods at it.
package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/test/cluster/dns"
)

func main() {
	var kubeconfig, resolvConf string
	cfg := dns.Config{}
	fs := cli.NewFlagSet("clusterdns", "the local cluster's DNS server")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Kubeconfig of the cluster.")
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:53", "Address served over UDP and TCP.")
	fs.StringVar(&cfg.Domain, "domain", "cluster.local", "Cluster domain.")
	fs.StringVar(&resolvConf, "resolv-conf", "/etc/resolv.conf", "Resolvers of the names outside the cluster domain; empty for none.")
	cli.Main(fs, func(ctx context.Context) error {
		rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return err
		}
		if resolvConf != "" {
			b, err := os.ReadFile(resolvConf)
			if err != nil {
				return fmt.Errorf("reading the upstream resolvers: %w", err)
			}
			cfg.Upstreams = dns.Upstreams(b, cfg.Listen)
		}
		return dns.Run(ctx, rc, cfg, klog.NewKlogr())
	})
}
