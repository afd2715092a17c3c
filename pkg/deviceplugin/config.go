// Package deviceplugin is the vendor-neutral kubelet device plugin: the
// Supervisor runs one gRPC server per extended resource (a Resource),
// registers each with the kubelet and serves them again when the kubelet
// restarts. Vendors (pkg/nvidia/plugin, pkg/ascend/plugin) implement Vendor
// and Resource over their device models; this package imports no vendor.
package deviceplugin

import (
	"fmt"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

// DefaultPluginDir is where the kubelet looks for device-plugin sockets.
const DefaultPluginDir = "/var/lib/kubelet/device-plugins/"

// Config configures the device plugin.
type Config struct {
	// Vendor is accelerator.VendorNVIDIA or accelerator.VendorAscend.
	Vendor string
	// Backend is the device library: nvml (nvidia), dcmi (ascend), or simulated.
	Backend string
	// Simulate is the simulated machine profile when Backend is simulated.
	Simulate string
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

// Validate reports the first flag combination that makes no sense, naming the flag.
func (c Config) Validate() error {
	allowed := map[string][]string{
		accelerator.VendorNVIDIA: {accelerator.BackendNVML, accelerator.BackendSimulated},
		accelerator.VendorAscend: {accelerator.BackendDCMI, accelerator.BackendSimulated},
	}
	backends, ok := allowed[c.Vendor]
	if !ok {
		return fmt.Errorf("invalid value %q for flag --vendor: must be %s or %s", c.Vendor, accelerator.VendorNVIDIA, accelerator.VendorAscend)
	}
	found := false
	for _, b := range backends {
		found = found || b == c.Backend
	}
	if !found {
		return fmt.Errorf("invalid value %q for flag --backend with --vendor=%s: must be one of %v", c.Backend, c.Vendor, backends)
	}
	if c.Backend == accelerator.BackendSimulated && c.Simulate == "" {
		return fmt.Errorf("flag --simulate is required with --backend=%s", accelerator.BackendSimulated)
	}
	if c.Backend != accelerator.BackendSimulated && c.Simulate != "" {
		return fmt.Errorf("flag --simulate=%s needs --backend=%s", c.Simulate, accelerator.BackendSimulated)
	}
	return nil
}

// DefaultBackend returns the real device library of a vendor.
func DefaultBackend(vendor string) string {
	if vendor == accelerator.VendorAscend {
		return accelerator.BackendDCMI
	}
	return accelerator.BackendNVML
}
