// Command device-plugin advertises a node's accelerators (NVIDIA GPUs, MIG
// slices, time-sliced replicas, Ascend NPUs) to the kubelet.
package main

import (
	"context"

	"github.com/accelstack/accelstack/pkg/accelerator"
	ascendplugin "github.com/accelstack/accelstack/pkg/ascend/plugin"
	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
	nvidiaplugin "github.com/accelstack/accelstack/pkg/nvidia/plugin"
)

// vendors are the vendors --vendor takes, each with its backends, flags and
// constructor: a new vendor is one more line.
var vendors = deviceplugin.Registrations{
	nvidiaplugin.Registration,
	ascendplugin.Registration,
}

func main() {
	cli.Main(command())
}

// command returns the binary's flags, its own and every vendor's, and its
// body, which runs the vendor --vendor names.
func command() (*cli.FlagSet, func(ctx context.Context) error) {
	fs := cli.NewFlagSet("device-plugin", "kubelet device plugin for NVIDIA GPUs and Huawei Ascend NPUs")
	var cfg deviceplugin.Config
	fs.StringVar(&cfg.Vendor, "vendor", accelerator.VendorNVIDIA, "Accelerator vendor: "+vendors.VendorHelp()+".")
	fs.StringVar(&cfg.Backend, "backend", "", "Device library: "+vendors.BackendHelp()+"; empty means the vendor's real library.")
	fs.StringVar(&cfg.Simulate, "simulate", "", "Simulated machine profile, with --backend=simulated (e.g. dgxa100).")
	fs.StringVar(&cfg.ControlSocket, "simulate-control-socket", "", "With --backend=simulated: a unix socket accepting 'xid <device> <xid>' to inject events.")
	fs.StringVar(&cfg.PluginDir, "device-plugin-path", deviceplugin.DefaultPluginDir, "The kubelet's device-plugin directory.")
	fs.BoolVar(&cfg.FailOnInitError, "fail-on-init-error", true, "Exit when the device library fails to start; false idles without advertising.")
	fs.StringVar(&cfg.ConfigFile, "config-file", "", "Path to a config file (version v1).")
	fs.StringVar(&cfg.MetricsAddress, "metrics-address", "", "Serve /metrics (registration per resource), /readyz and /healthz here, e.g. :9401; empty serves nothing.")
	for name, env := range map[string]string{
		"vendor": "VENDOR", "backend": "BACKEND", "simulate": "SIMULATE", "simulate-control-socket": "SIMULATE_CONTROL_SOCKET",
		"device-plugin-path": "DEVICE_PLUGIN_PATH", "fail-on-init-error": "FAIL_ON_INIT_ERROR", "config-file": "CONFIG_FILE",
		"metrics-address": "METRICS_ADDRESS",
	} {
		fs.Env(name, env)
	}
	constructors := map[string]deviceplugin.NewVendorFunc{}
	for _, v := range vendors {
		constructors[v.Name] = v.AddFlags(fs)
	}
	fs.Check(func() error {
		if cfg.Backend == "" {
			cfg.Backend = vendors.DefaultBackend(cfg.Vendor)
		}
		return cfg.Validate(vendors)
	})
	return fs, func(ctx context.Context) error {
		v, err := constructors[cfg.Vendor](ctx, &cfg)
		if err != nil {
			return err
		}
		return deviceplugin.Run(ctx, cfg, v)
	}
}
