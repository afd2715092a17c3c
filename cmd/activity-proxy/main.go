// Command activity-proxy is the activity sidecar of Notebook, TensorBoard
// and Explorer pods: a reverse proxy in front of the workload's HTTP entry
// (port 8080) and a forwarder in front of its sshd (port 2222), which
// records the clients' activity and reports it at /.t9k/activity for the
// Resource Keeper. See package proxy.
package main

import (
	"context"

	"github.com/accelstack/accelstack/pkg/activity/proxy"
	"github.com/accelstack/accelstack/pkg/cli"
)

func main() {
	fs := cli.NewFlagSet("activity-proxy", "the activity sidecar of Notebooks, TensorBoards and Explorers")
	cfg := proxy.DefaultConfig()
	fs.StringVar(&cfg.Address, "address", cfg.Address, "Address of the HTTP proxy.")
	fs.StringVar(&cfg.Upstream, "upstream", cfg.Upstream, "The workload's HTTP entry, http://host:port.")
	fs.StringVar(&cfg.SSHAddress, "ssh-address", cfg.SSHAddress, "Address of the SSH forwarder; empty for none.")
	fs.StringVar(&cfg.SSHUpstream, "ssh-upstream", cfg.SSHUpstream, "The workload's SSH server, host:port.")
	fs.IntVar(&cfg.MaxConnections, "max-connections", cfg.MaxConnections, "HTTP connections open at once, websockets included; more wait.")
	fs.IntVar(&cfg.MaxSSHSessions, "max-ssh-sessions", cfg.MaxSSHSessions, "SSH sessions open at once; more are closed.")
	fs.DurationVar(&cfg.DialTimeout, "dial-timeout", cfg.DialTimeout, "Limit of a connection to the workload.")
	fs.StringVar(&cfg.AccessTokenFile, "access-token-file", cfg.AccessTokenFile,
		"File holding the token a proxied request must carry (bearer, cookie t9k-access or query t9k-token) unless it comes from the pod's loopback; empty for no check. Read once at the start.")
	// The check reads cfg once the flags are parsed.
	fs.Check(func() error { return cfg.Validate() })
	cli.Main(fs, func(ctx context.Context) error { return proxy.Run(ctx, cfg) })
}
