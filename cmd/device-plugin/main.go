// Command device-plugin advertises a node's accelerators (NVIDIA GPUs, MIG
// slices, time-sliced replicas, Ascend NPUs) to the kubelet.
package main

import (
	"context"

	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
)

func main() {
	fs := cli.NewFlagSet("device-plugin", "kubelet device plugin for NVIDIA GPUs and Huawei Ascend NPUs")
	var cfg deviceplugin.Config
	fs.StringVar(&cfg.Vendor, "vendor", deviceplugin.VendorNVIDIA, "Accelerator vendor: nvidia or ascend.")
	fs.StringVar(&cfg.Backend, "backend", "", "Device library: nvml (nvidia), dcmi (ascend) or simulated; empty means the vendor's real library.")
	fs.StringVar(&cfg.Simulate, "simulate", "", "Simulated machine profile, with --backend=simulated (e.g. dgxa100).")
	fs.StringVar(&cfg.PluginDir, "device-plugin-path", deviceplugin.DefaultPluginDir, "The kubelet's device-plugin directory.")
	fs.BoolVar(&cfg.FailOnInitError, "fail-on-init-error", true, "Exit when the device library fails to start; false idles without advertising.")
	fs.StringVar(&cfg.ConfigFile, "config-file", "", "Path to a config file (version v1).")
	fs.Env("vendor", "VENDOR")
	fs.Env("backend", "BACKEND")
	fs.Env("simulate", "SIMULATE")
	fs.Env("device-plugin-path", "DEVICE_PLUGIN_PATH")
	fs.Env("fail-on-init-error", "FAIL_ON_INIT_ERROR")
	fs.Env("config-file", "CONFIG_FILE")
	fs.Check(func() error {
		if cfg.Backend == "" {
			cfg.Backend = deviceplugin.DefaultBackend(cfg.Vendor)
		}
		return cfg.Validate()
	})

	cli.Main(fs, func(ctx context.Context) error { return deviceplugin.Run(ctx, cfg, deviceplugin.NullVendor{VendorName: cfg.Vendor}) })
}
