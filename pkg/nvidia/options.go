package nvidia

import (
	"fmt"
	"os"
	"time"

	configv1 "github.com/accelstack/accelstack/api/config/v1"
	"github.com/accelstack/accelstack/pkg/accelerator"
)

// Option names as command-line flags; Options.Set records which of them
// were given on the command line or in the environment.
const (
	FlagMigStrategy        = "mig-strategy"
	FlagFailOnInitError    = "fail-on-init-error"
	FlagPassDeviceSpecs    = "pass-device-specs"
	FlagDeviceListStrategy = "device-list-strategy"
	FlagDeviceIDStrategy   = "device-id-strategy"
)

// Options are what the device plugin (pkg/nvidia/plugin) and the node
// agent share about a node's GPUs, so that both read them alike: the
// backend, the settings of the config file merged with those given as
// flags, and the health policy. Values from flags or environment (named in
// Set) win over the config file, which wins over the defaults already in
// the fields.
type Options struct {
	// Backend is nvml or simulated.
	Backend string
	// Simulate is the simulated profile (pkg/nvidia/simulator).
	Simulate string
	// ConfigFile is the optional api/config/v1 file.
	ConfigFile string
	// Set names the flags given on the command line or in the environment.
	Set map[string]bool

	Settings

	// HealthQuietPeriod is how long a device must be event-free before a
	// passing NVML check makes it healthy again; 0 disables recovery.
	HealthQuietPeriod time.Duration
	// DisableHealthChecks and EnableHealthChecks are the values of
	// DP_DISABLE_HEALTHCHECKS and DP_ENABLE_HEALTHCHECKS.
	DisableHealthChecks, EnableHealthChecks string
}

// Settings are the effective device-plugin settings after merging.
type Settings struct {
	MigStrategy        string
	FailOnInitError    bool
	PassDeviceSpecs    bool
	DeviceListStrategy string
	DeviceIDStrategy   string
	SharedPolicy       string
	TimeSlicing        *configv1.TimeSlicing
}

// DefaultOptions returns NVIDIA's defaults.
func DefaultOptions() Options {
	return Options{
		Backend: accelerator.BackendNVML,
		Settings: Settings{
			MigStrategy:        configv1.MIGStrategyNone,
			FailOnInitError:    true,
			DeviceListStrategy: configv1.DeviceListStrategyEnvvar,
			DeviceIDStrategy:   configv1.DeviceIDStrategyUUID,
			SharedPolicy:       configv1.SharedPolicyDistributed,
		},
		HealthQuietPeriod: 5 * time.Minute,
	}
}

// Resolve reads the config file (if any) and returns the effective
// settings and the file's content. Errors name the file and field.
func (o Options) Resolve() (Settings, []byte, error) {
	s := o.Settings
	if err := validateSettings(s); err != nil {
		return s, nil, err
	}
	if o.ConfigFile == "" {
		return s, nil, nil
	}
	raw, err := os.ReadFile(o.ConfigFile)
	if err != nil {
		return s, nil, fmt.Errorf("reading config file: %w", err)
	}
	c, err := configv1.Parse(raw)
	if err != nil {
		return s, nil, fmt.Errorf("config file %s: %w", o.ConfigFile, err)
	}
	f := c.Flags
	if f.MigStrategy != nil && !o.Set[FlagMigStrategy] {
		s.MigStrategy = *f.MigStrategy
	}
	if f.FailOnInitError != nil && !o.Set[FlagFailOnInitError] {
		s.FailOnInitError = *f.FailOnInitError
	}
	if p := f.Plugin; p != nil {
		if p.PassDeviceSpecs != nil && !o.Set[FlagPassDeviceSpecs] {
			s.PassDeviceSpecs = *p.PassDeviceSpecs
		}
		if p.DeviceListStrategy != nil && !o.Set[FlagDeviceListStrategy] {
			s.DeviceListStrategy = *p.DeviceListStrategy
		}
		if p.DeviceIDStrategy != nil && !o.Set[FlagDeviceIDStrategy] {
			s.DeviceIDStrategy = *p.DeviceIDStrategy
		}
		if p.SharedDevicesAllocationPolicy != nil {
			s.SharedPolicy = *p.SharedDevicesAllocationPolicy
		}
	}
	s.TimeSlicing = c.Sharing.TimeSlicing
	return s, raw, nil
}

func validateSettings(s Settings) error {
	checks := []struct {
		flag, v string
		allowed []string
	}{
		{FlagMigStrategy, s.MigStrategy, []string{configv1.MIGStrategyNone, configv1.MIGStrategySingle, configv1.MIGStrategyMixed}},
		{FlagDeviceListStrategy, s.DeviceListStrategy, []string{configv1.DeviceListStrategyEnvvar, configv1.DeviceListStrategyVolumeMounts}},
		{FlagDeviceIDStrategy, s.DeviceIDStrategy, []string{configv1.DeviceIDStrategyUUID, configv1.DeviceIDStrategyIndex}},
	}
	for _, c := range checks {
		ok := false
		for _, a := range c.allowed {
			ok = ok || a == c.v
		}
		if !ok {
			return fmt.Errorf("invalid value %q for flag --%s: must be one of %v", c.v, c.flag, c.allowed)
		}
	}
	return nil
}
