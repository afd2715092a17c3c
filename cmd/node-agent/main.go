// Command node-agent serves GPU and NPU metrics with pod attribution for
// Prometheus and labels the node with its accelerators.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/ascend"
	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/nodeagent"
	"github.com/accelstack/accelstack/pkg/nvidia"
)

func main() {
	fs := cli.NewFlagSet("node-agent", "accelerator metrics, node labels and health for one node")
	var cfg nodeagent.Config
	fs.StringVar(&cfg.Address, "address", ":9400", "Address of /metrics and /healthz.")
	fs.StringVar(&cfg.NodeName, "node-name", "", "This node's name; empty serves metrics only, with no cluster.")
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "Path to a kubeconfig; empty means in-cluster.")
	fs.StringVar(&cfg.Backend, "backend", accelerator.BackendNVML, "Device backend: "+cli.Alternatives(nodeagent.Backends()...)+".")
	fs.StringVar(&cfg.Simulate, "simulate", "", "Simulated machine profile, with --backend=simulated (e.g. dgxa100).")
	fs.StringVar(&cfg.PodResourcesSocket, "pod-resources-socket", "/var/lib/kubelet/pod-resources/kubelet.sock", "The kubelet PodResources API socket; empty disables pod attribution.")
	fs.DurationVar(&cfg.CollectInterval, "collect-interval", nodeagent.DefaultCollectInterval, "Time between device collections; scrapes serve the last one.")
	fs.StringVar(&cfg.ConfigFile, "config-file", "", "The device plugin's config file (api/config/v1: MIG strategy, time-slicing), for the node labels.")
	fs.DurationVar(&cfg.HealthQuietPeriod, "health-quiet-period", nodeagent.DefaultHealthQuietPeriod, "As the device plugin's: an unhealthy GPU with no critical XID for this long that passes an NVML check is healthy again.")
	fs.StringVar(&cfg.MigStrategy, "mig-strategy", "", "MIG strategy (none, single, mixed); overrides the config file like the device plugin's flag.")
	fs.StringVar(&cfg.DCMILibrary, "dcmi-library", ascend.DefaultDCMILibrary, "Path or name of the Ascend DCMI library, with --backend=dcmi.")
	fs.StringVar(&cfg.ControlSocket, "simulate-control-socket", "", "With --backend=simulated: a unix socket accepting the simulator's commands, e.g. 'util <gpu> <percent>' (pkg/simcontrol).")
	fs.Env("dcmi-library", "DCMI_LIBRARY")
	fs.Env("health-quiet-period", "HEALTH_QUIET_PERIOD")
	fs.Env("address", "ADDRESS")
	fs.Env("node-name", "NODE_NAME")
	fs.Env("kubeconfig", "KUBECONFIG")
	fs.Env("backend", "BACKEND")
	fs.Env("simulate", "SIMULATE")
	fs.Env("collect-interval", "COLLECT_INTERVAL")
	fs.Env("config-file", "CONFIG_FILE")
	fs.Env("mig-strategy", "MIG_STRATEGY")
	fs.Env("simulate-control-socket", "SIMULATE_CONTROL_SOCKET")
	fs.Check(func() error { return cli.OneOf("backend", cfg.Backend, nodeagent.Backends()...) })
	fs.Check(func() error {
		if cfg.MigStrategy == "" {
			return nil
		}
		return cli.OneOf("mig-strategy", cfg.MigStrategy, "none", "single", "mixed")
	})
	fs.Check(func() error {
		if cfg.CollectInterval <= 0 {
			return fmt.Errorf("invalid value %s for flag --collect-interval: must be positive", cfg.CollectInterval)
		}
		return nil
	})

	cli.Main(fs, func(ctx context.Context) error {
		cfg.DisableHealthChecks = os.Getenv(nvidia.EnvDisableHealthChecks)
		cfg.EnableHealthChecks = os.Getenv(nvidia.EnvEnableHealthChecks)
		agent, err := nodeagent.New(ctx, cfg)
		if err != nil {
			return err
		}
		return agent.Run(ctx)
	})
}
