package nvidia

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"time"

	configv1 "github.com/accelstack/accelstack/api/config/v1"
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

// Options configure the NVIDIA vendor. Values from flags or environment
// (named in Set) win over the config file, which wins over the defaults
// already in the fields.
type Options struct {
	// Backend is nvml or simulated.
	Backend string
	// Simulate is the simulated profile.
	Simulate string
	// Simulator, when set, is used instead of building Simulate.
	Simulator *Simulator
	// ControlSocket, with the simulated backend, serves XID injection.
	ControlSocket string
	// ConfigFile is the optional api/config/v1 file.
	ConfigFile string
	// Set names the flags given on the command line or in the environment.
	Set map[string]bool

	Settings

	// DevRoot is where the host's /dev/nvidia* files are, for device specs.
	DevRoot string
	// HealthQuietPeriod is how long a device must be event-free before a
	// passing NVML check makes it healthy again; 0 disables recovery.
	HealthQuietPeriod time.Duration
	// HealthWait bounds one NVML event wait (and so shutdown latency).
	HealthWait time.Duration
	// DisableHealthChecks and EnableHealthChecks are the values of
	// DP_DISABLE_HEALTHCHECKS and DP_ENABLE_HEALTHCHECKS.
	DisableHealthChecks, EnableHealthChecks string
}

// Settings are the effective plugin settings after merging.
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
		Backend: "nvml",
		Settings: Settings{
			MigStrategy:        configv1.MIGStrategyNone,
			FailOnInitError:    true,
			DeviceListStrategy: configv1.DeviceListStrategyEnvvar,
			DeviceIDStrategy:   configv1.DeviceIDStrategyUUID,
			SharedPolicy:       configv1.SharedPolicyDistributed,
		},
		DevRoot:           "/dev",
		HealthQuietPeriod: 5 * time.Minute,
		HealthWait:        200 * time.Millisecond,
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

// sameSettings compares settings and the file they came from.
func sameSettings(a, b Settings, rawA, rawB []byte) bool {
	return reflect.DeepEqual(a, b) && bytes.Equal(rawA, rawB)
}
