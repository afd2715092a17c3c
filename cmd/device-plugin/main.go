// Command device-plugin advertises a node's accelerators (NVIDIA GPUs, MIG
// slices, time-sliced replicas, Ascend NPUs) to the kubelet.
package main

import (
	"context"
	"flag"
	"os"
	"time"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/ascend"
	"github.com/accelstack/accelstack/pkg/ascend/nodestate"
	ascendplugin "github.com/accelstack/accelstack/pkg/ascend/plugin"
	"github.com/accelstack/accelstack/pkg/ascend/volcano"
	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
	"github.com/accelstack/accelstack/pkg/nodeclient"
	"github.com/accelstack/accelstack/pkg/nvidia"
	nvidiaplugin "github.com/accelstack/accelstack/pkg/nvidia/plugin"
)

func main() {
	fs := cli.NewFlagSet("device-plugin", "kubelet device plugin for NVIDIA GPUs and Huawei Ascend NPUs")
	var cfg deviceplugin.Config
	fs.StringVar(&cfg.Vendor, "vendor", accelerator.VendorNVIDIA, "Accelerator vendor: nvidia or ascend.")
	fs.StringVar(&cfg.Backend, "backend", "", "Device library: nvml (nvidia), dcmi (ascend) or simulated; empty means the vendor's real library.")
	fs.StringVar(&cfg.Simulate, "simulate", "", "Simulated machine profile, with --backend=simulated (e.g. dgxa100).")
	fs.StringVar(&cfg.PluginDir, "device-plugin-path", deviceplugin.DefaultPluginDir, "The kubelet's device-plugin directory.")
	fs.BoolVar(&cfg.FailOnInitError, "fail-on-init-error", true, "Exit when the device library fails to start; false idles without advertising.")
	fs.StringVar(&cfg.ConfigFile, "config-file", "", "Path to a config file (version v1).")
	fs.StringVar(&cfg.MetricsAddress, "metrics-address", "", "Serve /metrics (registration per resource), /readyz and /healthz here, e.g. :9401; empty serves nothing.")

	nv := nvidiaplugin.DefaultOptions()
	fs.StringVar(&nv.MigStrategy, nvidia.FlagMigStrategy, nv.MigStrategy, "NVIDIA MIG strategy: none, single or mixed.")
	fs.BoolVar(&nv.PassDeviceSpecs, nvidia.FlagPassDeviceSpecs, false, "Pass /dev/nvidia* device specs in Allocate responses.")
	fs.StringVar(&nv.DeviceListStrategy, nvidia.FlagDeviceListStrategy, nv.DeviceListStrategy, "How devices reach the NVIDIA runtime: envvar or volume-mounts.")
	fs.StringVar(&nv.DeviceIDStrategy, nvidia.FlagDeviceIDStrategy, nv.DeviceIDStrategy, "How devices are named to the NVIDIA runtime: uuid or index.")
	fs.StringVar(&nv.DevRoot, "nvidia-dev-root", nv.DevRoot, "Host directory holding the /dev/nvidia* device nodes.")
	fs.DurationVar(&nv.HealthQuietPeriod, "health-quiet-period", nv.HealthQuietPeriod, "An unhealthy device with no XID for this long that passes an NVML check is healthy again; 0 never heals.")
	fs.StringVar(&nv.ControlSocket, "simulate-control-socket", "", "With --backend=simulated: a unix socket accepting 'xid <device> <xid>' to inject events.")
	as := ascendplugin.DefaultOptions()
	var vo volcano.Options
	var volcanoMode bool
	var kubeconfig string
	fs.StringVar(&as.DCMILibrary, "dcmi-library", ascend.DefaultDCMILibrary, "Ascend: path or name of the DCMI library.")
	fs.BoolVar(&as.UseAscendDocker, "use-ascend-docker", as.UseAscendDocker, "Ascend: pass ASCEND_VISIBLE_DEVICES for Ascend Docker Runtime instead of /dev/davinci* device specs.")
	fs.BoolVar(&volcanoMode, "volcano", false, "Ascend: allocate the chips Volcano annotated on the pod (needs --node-name).")
	fs.StringVar(&vo.NodeName, "node-name", "", "Ascend: this node's name, for Volcano mode and the node state (mindx-dl-deviceinfo-<node>, servertype).")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Ascend: kubeconfig for Volcano mode; empty means in-cluster.")
	fs.DurationVar(&as.HealthPeriod, "health-check-period", as.HealthPeriod, "Ascend: how often chip health is polled.")
	for name, env := range map[string]string{
		"vendor": "VENDOR", "backend": "BACKEND", "simulate": "SIMULATE", "device-plugin-path": "DEVICE_PLUGIN_PATH",
		"fail-on-init-error": "FAIL_ON_INIT_ERROR", "config-file": "CONFIG_FILE", "metrics-address": "METRICS_ADDRESS",
		nvidia.FlagMigStrategy: "MIG_STRATEGY", nvidia.FlagPassDeviceSpecs: "PASS_DEVICE_SPECS",
		nvidia.FlagDeviceListStrategy: "DEVICE_LIST_STRATEGY", nvidia.FlagDeviceIDStrategy: "DEVICE_ID_STRATEGY",
		"nvidia-dev-root": "NVIDIA_DEV_ROOT", "health-quiet-period": "HEALTH_QUIET_PERIOD",
		"simulate-control-socket": "SIMULATE_CONTROL_SOCKET",
		"dcmi-library":            "DCMI_LIBRARY", "use-ascend-docker": "USE_ASCEND_DOCKER", "volcano": "VOLCANO",
		"node-name": "NODE_NAME", "kubeconfig": "KUBECONFIG", "health-check-period": "HEALTH_CHECK_PERIOD",
	} {
		fs.Env(name, env)
	}
	fs.Check(func() error {
		if cfg.Backend == "" {
			cfg.Backend = deviceplugin.DefaultBackend(cfg.Vendor)
		}
		nv.Set = map[string]bool{}
		fs.Visit(func(f *flag.Flag) { nv.Set[f.Name] = true })
		for _, c := range []error{
			cli.OneOf(nvidia.FlagMigStrategy, nv.MigStrategy, "none", "single", "mixed"),
			cli.OneOf(nvidia.FlagDeviceListStrategy, nv.DeviceListStrategy, "envvar", "volume-mounts"),
			cli.OneOf(nvidia.FlagDeviceIDStrategy, nv.DeviceIDStrategy, "uuid", "index"),
		} {
			if c != nil {
				return c
			}
		}
		return cfg.Validate()
	})

	cli.Main(fs, func(ctx context.Context) error {
		as.Backend, as.Simulate, as.ControlSocket = cfg.Backend, cfg.Simulate, nv.ControlSocket
		if volcanoMode {
			p, err := newVolcanoPicker(vo, kubeconfig)
			if err != nil {
				return err
			}
			as.Picker = p
		}
		v, err := newVendor(&cfg, nv, as)
		if err != nil {
			return err
		}
		if av, ok := v.(*ascendplugin.Vendor); ok && vo.NodeName != "" {
			r, err := newNodeState(vo.NodeName, kubeconfig, as.HealthPeriod, av)
			if err != nil {
				return err
			}
			go r.Run(ctx)
		}
		return deviceplugin.Run(ctx, cfg, v)
	})
}

// newVendor builds the vendor named by cfg; the config file's
// failOnInitError applies unless the flag or its variable was given.
func newVendor(cfg *deviceplugin.Config, nv nvidiaplugin.Options, as ascendplugin.Options) (deviceplugin.Vendor, error) {
	switch cfg.Vendor {
	case accelerator.VendorNVIDIA:
		nv.Backend, nv.Simulate, nv.ConfigFile = cfg.Backend, cfg.Simulate, cfg.ConfigFile
		nv.FailOnInitError = cfg.FailOnInitError
		nv.DisableHealthChecks = os.Getenv(nvidia.EnvDisableHealthChecks)
		nv.EnableHealthChecks = os.Getenv(nvidia.EnvEnableHealthChecks)
		v, err := nvidiaplugin.NewVendor(nv)
		if err != nil {
			return nil, err
		}
		cfg.FailOnInitError = v.Settings().FailOnInitError
		return v, nil
	default:
		return ascendplugin.NewVendor(as)
	}
}

// newNodeState publishes the Ascend node's chips and servertype label.
func newNodeState(node, kubeconfig string, period time.Duration, v *ascendplugin.Vendor) (*nodestate.Reporter, error) {
	c, err := nodeclient.Load(kubeconfig, ascendplugin.UserAgent)
	if err != nil {
		return nil, err
	}
	return nodestate.New(nodestate.Options{Client: c, NodeName: node, Period: period}, v)
}

// newVolcanoPicker connects to the API server for Ascend's Volcano mode.
func newVolcanoPicker(o volcano.Options, kubeconfig string) (*volcano.Picker, error) {
	c, err := nodeclient.Load(kubeconfig, ascendplugin.UserAgent)
	if err != nil {
		return nil, err
	}
	o.Client = c
	return volcano.New(o)
}
