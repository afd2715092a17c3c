// Package deviceplugin is the vendor-neutral kubelet device plugin: the
// Supervisor runs one gRPC server per extended resource (a Resource),
// registers each with the kubelet and serves them again when the kubelet
// restarts. Vendors (pkg/nvidia/plugin, pkg/ascend/plugin) implement Vendor
// and Resource over their device models, and each registers its flags and
// constructor with cmd/device-plugin as a Registration; this package
// imports no vendor.
package deviceplugin

import (
	"fmt"
	"slices"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

// DefaultPluginDir is where the kubelet looks for device-plugin sockets.
const DefaultPluginDir = "/var/lib/kubelet/device-plugins/"

// Config configures the device plugin.
type Config struct {
	// Vendor is a registered vendor's name (Registration.Name), e.g.
	// accelerator.VendorNVIDIA.
	Vendor string
	// Backend is the device library, one of the vendor's
	// Registration.Backends: nvml (nvidia), dcmi (ascend), or simulated.
	Backend string
	// Simulate is the simulated machine profile when Backend is simulated.
	Simulate string
	// ControlSocket, with the simulated backend, is where the vendor serves
	// its simulator's control socket (pkg/simcontrol); empty serves none.
	ControlSocket string
	// PluginDir is the kubelet's device-plugin directory.
	PluginDir string
	// FailOnInitError exits when the device library cannot start; otherwise
	// the plugin idles and advertises nothing.
	FailOnInitError bool
	// ConfigFile is an optional config file (api/config/v1).
	ConfigFile string
	// MetricsAddress serves /metrics (the registration gauge), /readyz and
	// /healthz over HTTP; empty serves nothing.
	MetricsAddress string
}

// Validate reports the first flag combination that makes no sense, naming
// the flag: the vendor must be one of vendors and the backend one of its.
func (c Config) Validate(vendors Registrations) error {
	v, ok := vendors.Lookup(c.Vendor)
	if !ok {
		return fmt.Errorf("invalid value %q for flag --vendor: must be %s", c.Vendor, vendors.VendorHelp())
	}
	if !slices.Contains(v.Backends, c.Backend) {
		return fmt.Errorf("invalid value %q for flag --backend with --vendor=%s: must be one of %v", c.Backend, c.Vendor, v.Backends)
	}
	if c.Backend == accelerator.BackendSimulated && c.Simulate == "" {
		return fmt.Errorf("flag --simulate is required with --backend=%s", accelerator.BackendSimulated)
	}
	if c.Backend != accelerator.BackendSimulated && c.Simulate != "" {
		return fmt.Errorf("flag --simulate=%s needs --backend=%s", c.Simulate, accelerator.BackendSimulated)
	}
	return nil
}
