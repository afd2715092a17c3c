// Command node-agent serves GPU and NPU metrics with pod attribution for
// Prometheus and labels the node with its accelerators.
package main

import (
	"context"

	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/nodeagent"
)

func main() {
	fs := cli.NewFlagSet("node-agent", "accelerator metrics, node labels and health for one node")
	var cfg nodeagent.Config
	fs.StringVar(&cfg.Address, "address", ":9400", "Address of /metrics and /healthz.")
	fs.StringVar(&cfg.NodeName, "node-name", "", "This node's name; empty serves metrics only, with no cluster.")
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "Path to a kubeconfig; empty means in-cluster.")
	fs.StringVar(&cfg.Backend, "backend", "nvml", "Device backend: nvml, dcmi or simulated.")
	fs.StringVar(&cfg.Simulate, "simulate", "", "Simulated machine profile, with --backend=simulated (e.g. dgxa100).")
	fs.StringVar(&cfg.PodResourcesSocket, "pod-resources-socket", "/var/lib/kubelet/pod-resources/kubelet.sock", "The kubelet PodResources API socket.")
	fs.Env("address", "ADDRESS")
	fs.Env("node-name", "NODE_NAME")
	fs.Env("backend", "BACKEND")
	fs.Env("simulate", "SIMULATE")
	fs.Check(func() error { return cli.OneOf("backend", cfg.Backend, "nvml", "dcmi", "simulated") })

	cli.Main(fs, func(ctx context.Context) error {
		agent, err := nodeagent.New(cfg)
		if err != nil {
			return err
		}
		return agent.Run(ctx)
	})
}
