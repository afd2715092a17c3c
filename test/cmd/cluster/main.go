// Command cluster runs accelstack's local single-node Kubernetes (package
// test/cluster): a real kubelet, containerd and control plane on this
// machine, with no Docker and no registry.
//
//	cluster up       start it (a no-op when it runs; cleans up a crashed one)
//	cluster install  apply accelstack's manifests (test/cluster/manifests)
//	cluster demo     up, install, then the demo's examples (package test/cluster/demo)
//	cluster status   say whether it runs
//	cluster workload-images  build the workload images from Debian packages, for a later up
//	cluster down     stop it and leave the host as up found it
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/test/cluster"
	"github.com/accelstack/accelstack/test/cluster/demo"
)

var commands = map[string]func(ctx context.Context, c *cluster.Cluster) error{
	"up":      func(ctx context.Context, c *cluster.Cluster) error { return c.Up(ctx) },
	"down":    func(ctx context.Context, c *cluster.Cluster) error { return c.Down(ctx) },
	"install": func(ctx context.Context, c *cluster.Cluster) error { return c.Install(ctx) },
	"demo": func(ctx context.Context, c *cluster.Cluster) error {
		if err := c.Up(ctx); err != nil {
			return err
		}
		if err := c.Install(ctx); err != nil {
			return err
		}
		return demo.Run(ctx, c, os.Stdout)
	},
	"status":          status,
	"workload-images": func(ctx context.Context, c *cluster.Cluster) error { return c.BuildWorkloadImages(ctx) },
}

func main() {
	names := []string{"up", "install", "demo", "status", "down", "workload-images"}
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		fmt.Fprintf(os.Stderr, "usage: cluster <command> [flags]; commands: %s\n", strings.Join(names, ", "))
		os.Exit(cli.ExitBadUsage)
	}
	command := os.Args[1]
	os.Args = append(os.Args[:1], os.Args[2:]...)
	var opts cluster.Options
	fs := cli.NewFlagSet("cluster "+command, "the local single-node Kubernetes: "+strings.Join(names, ", "))
	fs.StringVar(&opts.StateDir, "state-dir", "", "State directory (PKI, configs, data, logs); default <cache>/cluster.")
	fs.StringVar(&opts.ImageDir, "image-dir", "", "Image tarball cache; default <cache>/cluster-images.")
	cli.Main(fs, func(ctx context.Context) error {
		c, err := cluster.New(opts)
		if err != nil {
			return err
		}
		return commands[command](ctx, c)
	})
}

func status(ctx context.Context, c *cluster.Cluster) error {
	if !c.Running(ctx) {
		return fmt.Errorf("the cluster is not running (state in %s)", c.StateDir())
	}
	fmt.Printf("The cluster is running.\n  export KUBECONFIG=%s\n", c.Kubeconfig())
	return nil
}
