package plugin

import (
	"context"
	"flag"
	"os"

	configv1 "github.com/accelstack/accelstack/api/config/v1"
	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
	"github.com/accelstack/accelstack/pkg/nvidia"
)

// Registration is the NVIDIA vendor of cmd/device-plugin: --vendor=nvidia,
// the nvml and simulated backends, and the flags of Options.
var Registration = deviceplugin.Registration{
	Name:     accelerator.VendorNVIDIA,
	Backends: []string{accelerator.BackendNVML, accelerator.BackendSimulated},
	AddFlags: addFlags,
}

// Flag names of the options that are not settings (nvidia.Flag*).
const (
	flagDevRoot           = "nvidia-dev-root"
	flagHealthQuietPeriod = "health-quiet-period"
)

// env names each flag's environment variable.
var env = map[string]string{
	nvidia.FlagMigStrategy:        "MIG_STRATEGY",
	nvidia.FlagPassDeviceSpecs:    "PASS_DEVICE_SPECS",
	nvidia.FlagDeviceListStrategy: "DEVICE_LIST_STRATEGY",
	nvidia.FlagDeviceIDStrategy:   "DEVICE_ID_STRATEGY",
	flagDevRoot:                   "NVIDIA_DEV_ROOT",
	flagHealthQuietPeriod:         "HEALTH_QUIET_PERIOD",
}

// addFlags defines the NVIDIA flags and returns the constructor reading them.
func addFlags(fs *cli.FlagSet) deviceplugin.NewVendorFunc {
	o := DefaultOptions()
	fs.StringVar(&o.MigStrategy, nvidia.FlagMigStrategy, o.MigStrategy, "NVIDIA MIG strategy: none, single or mixed.")
	fs.BoolVar(&o.PassDeviceSpecs, nvidia.FlagPassDeviceSpecs, false, "Pass /dev/nvidia* device specs in Allocate responses.")
	fs.StringVar(&o.DeviceListStrategy, nvidia.FlagDeviceListStrategy, o.DeviceListStrategy, "How devices reach the NVIDIA runtime: envvar or volume-mounts.")
	fs.StringVar(&o.DeviceIDStrategy, nvidia.FlagDeviceIDStrategy, o.DeviceIDStrategy, "How devices are named to the NVIDIA runtime: uuid or index.")
	fs.StringVar(&o.DevRoot, flagDevRoot, o.DevRoot, "Host directory holding the /dev/nvidia* device nodes.")
	fs.DurationVar(&o.HealthQuietPeriod, flagHealthQuietPeriod, o.HealthQuietPeriod, "An unhealthy device with no XID for this long that passes an NVML check is healthy again; 0 never heals.")
	for name, v := range env {
		fs.Env(name, v)
	}
	fs.Check(func() error {
		// Flags given win over the config file (nvidia.Options.Set).
		o.Set = map[string]bool{}
		fs.Visit(func(f *flag.Flag) { o.Set[f.Name] = true })
		for _, err := range []error{
			cli.OneOf(nvidia.FlagMigStrategy, o.MigStrategy, configv1.MIGStrategyNone, configv1.MIGStrategySingle, configv1.MIGStrategyMixed),
			cli.OneOf(nvidia.FlagDeviceListStrategy, o.DeviceListStrategy, configv1.DeviceListStrategyEnvvar, configv1.DeviceListStrategyVolumeMounts),
			cli.OneOf(nvidia.FlagDeviceIDStrategy, o.DeviceIDStrategy, configv1.DeviceIDStrategyUUID, configv1.DeviceIDStrategyIndex),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	})
	return func(_ context.Context, cfg *deviceplugin.Config) (deviceplugin.Vendor, error) {
		o := o
		o.Backend, o.Simulate, o.ConfigFile, o.ControlSocket = cfg.Backend, cfg.Simulate, cfg.ConfigFile, cfg.ControlSocket
		o.FailOnInitError = cfg.FailOnInitError
		o.DisableHealthChecks = os.Getenv(nvidia.EnvDisableHealthChecks)
		o.EnableHealthChecks = os.Getenv(nvidia.EnvEnableHealthChecks)
		v, err := NewVendor(o)
		if err != nil {
			return nil, err
		}
		// The config file's failOnInitError applies unless the flag (or
		// its variable) was given.
		cfg.FailOnInitError = v.Settings().FailOnInitError
		return v, nil
	}
}
