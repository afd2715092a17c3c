// Package v1 holds the versioned configuration files of the node binaries
// (device-plugin, node-agent). Settings resolve command line over
// environment over file over default.
package v1

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Version is the only config file version this package reads.
const Version = "v1"

// MIG strategies.
const (
	MIGStrategyNone   = "none"
	MIGStrategySingle = "single"
	MIGStrategyMixed  = "mixed"
)

// Device list strategies: how allocated devices reach the container runtime.
const (
	DeviceListStrategyEnvvar       = "envvar"
	DeviceListStrategyVolumeMounts = "volume-mounts"
)

// Device ID strategies: how devices are named to the container runtime.
const (
	DeviceIDStrategyUUID  = "uuid"
	DeviceIDStrategyIndex = "index"
)

// Shared-replica placement policies.
const (
	SharedPolicyDistributed = "distributed"
	SharedPolicyPacked      = "packed"
)

// ErrInvalid is wrapped by every validation error.
var ErrInvalid = errors.New("invalid config")

// Config is the device plugin's config file, a subset of NVIDIA's
// k8s-device-plugin `version: v1` file.
type Config struct {
	// Version must be v1.
	Version string `json:"version"`
	// Flags hold settings that also exist as command-line flags.
	Flags Flags `json:"flags,omitempty"`
	// Sharing configures oversubscription of devices.
	Sharing Sharing `json:"sharing,omitempty"`
}

// Flags are the file forms of command-line flags; nil means unset.
type Flags struct {
	// MigStrategy is none, single or mixed.
	MigStrategy *string `json:"migStrategy,omitempty"`
	// FailOnInitError makes the plugin exit when devices cannot be initialised.
	FailOnInitError *bool `json:"failOnInitError,omitempty"`
	// Plugin holds the device plugin's own settings.
	Plugin *PluginFlags `json:"plugin,omitempty"`
}

// PluginFlags are settings of the device plugin only.
type PluginFlags struct {
	// PassDeviceSpecs adds /dev/nvidia* device specs to Allocate responses.
	PassDeviceSpecs *bool `json:"passDeviceSpecs,omitempty"`
	// DeviceListStrategy is envvar or volume-mounts.
	DeviceListStrategy *string `json:"deviceListStrategy,omitempty"`
	// DeviceIDStrategy is uuid or index.
	DeviceIDStrategy *string `json:"deviceIDStrategy,omitempty"`
	// SharedDevicesAllocationPolicy is distributed (default) or packed.
	SharedDevicesAllocationPolicy *string `json:"sharedDevicesAllocationPolicy,omitempty"`
}

// Sharing configures device sharing.
type Sharing struct {
	// TimeSlicing advertises each device as several replicas.
	TimeSlicing *TimeSlicing `json:"timeSlicing,omitempty"`
}

// TimeSlicing is NVIDIA's time-slicing configuration.
type TimeSlicing struct {
	// RenameByDefault advertises replicas as <name>.shared.
	RenameByDefault bool `json:"renameByDefault,omitempty"`
	// FailRequestsGreaterThanOne refuses requests for more than one replica.
	FailRequestsGreaterThanOne bool `json:"failRequestsGreaterThanOne,omitempty"`
	// Resources lists the resources to replicate.
	Resources []ReplicatedResource `json:"resources,omitempty"`
}

// ReplicatedResource replicates the devices of one resource.
type ReplicatedResource struct {
	// Name is the resource to replicate, e.g. nvidia.com/gpu or nvidia.com/mig-1g.5gb.
	Name string `json:"name"`
	// Rename, if set, is the resource name of the replicas.
	Rename string `json:"rename,omitempty"`
	// Replicas is the number of replicas per device, 1 to MaxReplicas.
	Replicas int `json:"replicas"`
	// Devices selects devices by index or UUID; empty or "all" means all.
	Devices ReplicatedDevices `json:"devices,omitempty"`
}

// MaxReplicas bounds the replicas per device: each replica is a device ID
// in the kubelet's ListAndWatch message and checkpoint.
const MaxReplicas = 128

// MaxAdvertised bounds the device IDs one resource may advertise with its
// replicas, keeping ListAndWatch (about 100 bytes per ID) far under gRPC's
// 4 MiB message limit and the kubelet's checkpoint small.
const MaxAdvertised = 4096

// ReplicatedDevices is "all" or a list of device indices or UUIDs.
type ReplicatedDevices struct {
	// All is true for "all" (and when the field is absent).
	All bool
	// List holds indices ("0", "1:0") or UUIDs.
	List []string
}

// UnmarshalJSON accepts "all", a count-free list of strings or integers.
func (d *ReplicatedDevices) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == `"all"` || string(b) == "null" {
		*d = ReplicatedDevices{All: true}
		return nil
	}
	var raw []any
	if err := yaml.Unmarshal(b, &raw); err != nil || len(b) == 0 || b[0] != '[' {
		return fmt.Errorf(`devices: must be "all" or a list of device indices or UUIDs`)
	}
	d.All, d.List = false, nil
	for _, v := range raw {
		switch v := v.(type) {
		case string:
			d.List = append(d.List, v)
		case float64:
			if v < 0 || v != float64(int(v)) {
				return fmt.Errorf("devices: device index %v is not a non-negative integer", v)
			}
			d.List = append(d.List, fmt.Sprint(int(v)))
		default:
			return fmt.Errorf("devices: device %v is neither an index nor a UUID", v)
		}
	}
	return nil
}

// MarshalJSON writes "all" or the list.
func (d ReplicatedDevices) MarshalJSON() ([]byte, error) {
	if d.All || len(d.List) == 0 {
		return []byte(`"all"`), nil
	}
	return yaml.Marshal(d.List)
}

// Load reads and validates a config file.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config file: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes a YAML or JSON config strictly (unknown or duplicate fields
// are refused, naming the field) and validates it.
func Parse(b []byte) (*Config, error) {
	var c Config
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate reports the first invalid field, naming it.
func (c *Config) Validate() error {
	if c.Version != Version {
		return fmt.Errorf("%w: version: must be %q, got %q", ErrInvalid, Version, c.Version)
	}
	if s := c.Flags.MigStrategy; s != nil {
		if err := oneOf("flags.migStrategy", *s, MIGStrategyNone, MIGStrategySingle, MIGStrategyMixed); err != nil {
			return err
		}
	}
	if p := c.Flags.Plugin; p != nil {
		if s := p.DeviceListStrategy; s != nil {
			if err := oneOf("flags.plugin.deviceListStrategy", *s, DeviceListStrategyEnvvar, DeviceListStrategyVolumeMounts); err != nil {
				return err
			}
		}
		if s := p.DeviceIDStrategy; s != nil {
			if err := oneOf("flags.plugin.deviceIDStrategy", *s, DeviceIDStrategyUUID, DeviceIDStrategyIndex); err != nil {
				return err
			}
		}
		if s := p.SharedDevicesAllocationPolicy; s != nil {
			if err := oneOf("flags.plugin.sharedDevicesAllocationPolicy", *s, SharedPolicyDistributed, SharedPolicyPacked); err != nil {
				return err
			}
		}
	}
	if ts := c.Sharing.TimeSlicing; ts != nil {
		seen := map[string]bool{}
		for i, r := range ts.Resources {
			field := fmt.Sprintf("sharing.timeSlicing.resources[%d]", i)
			if r.Name == "" {
				return fmt.Errorf("%w: %s.name: must be set", ErrInvalid, field)
			}
			if !validResourceName(r.Name) {
				return fmt.Errorf("%w: %s.name: %q is not a resource name like nvidia.com/gpu", ErrInvalid, field, r.Name)
			}
			if r.Rename != "" && !validResourceName(r.Rename) {
				return fmt.Errorf("%w: %s.rename: %q is not a resource name like nvidia.com/gpu", ErrInvalid, field, r.Rename)
			}
			if r.Replicas < 1 || r.Replicas > MaxReplicas {
				return fmt.Errorf("%w: %s.replicas: must be between 1 and %d, got %d", ErrInvalid, field, MaxReplicas, r.Replicas)
			}
			if seen[r.Name] {
				return fmt.Errorf("%w: %s.name: %q is listed twice", ErrInvalid, field, r.Name)
			}
			seen[r.Name] = true
		}
		// Replicas advertised under an existing name would merge two
		// resources into one device list.
		renamed := map[string]string{}
		for i, r := range ts.Resources {
			if r.Rename == "" || r.Rename == r.Name {
				continue
			}
			field := fmt.Sprintf("sharing.timeSlicing.resources[%d].rename", i)
			if seen[r.Rename] {
				return fmt.Errorf("%w: %s: %q is the name of another listed resource", ErrInvalid, field, r.Rename)
			}
			if other, ok := renamed[r.Rename]; ok {
				return fmt.Errorf("%w: %s: %q is also the rename of %q", ErrInvalid, field, r.Rename, other)
			}
			renamed[r.Rename] = r.Name
		}
	}
	return nil
}

// validResourceName checks <domain>/<name> with a name of at most 63
// characters of [A-Za-z0-9._-] starting and ending alphanumerically.
func validResourceName(s string) bool {
	domain, name, ok := bytes.Cut([]byte(s), []byte("/"))
	if !ok || len(domain) == 0 || len(name) == 0 || len(name) > 63 {
		return false
	}
	alnum := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	if !alnum(name[0]) || !alnum(name[len(name)-1]) {
		return false
	}
	for _, c := range name {
		if !alnum(c) && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	for _, c := range domain {
		if !alnum(c) && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("%w: %s: %q must be one of %v", ErrInvalid, field, v, allowed)
}
