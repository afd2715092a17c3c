package deviceplugin

import (
	"context"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/cli"
)

// Registration is a vendor as cmd/device-plugin knows it. Each vendor's
// plugin package exports one (nvidiaplugin.Registration,
// ascendplugin.Registration) and the binary lists them: adding a vendor
// adds a line to that list, and the --vendor and --backend values, their
// help and their messages follow from it.
type Registration struct {
	// Name is the value of --vendor, the vendor's Name.
	Name string
	// Backends are the values of --backend the vendor takes, its real
	// device library first: the default when --backend is empty.
	Backends []string
	// AddFlags defines the vendor's own flags on fs, each with its
	// environment variable (fs.Env) and any fs.Check of their values,
	// whichever vendor is chosen, and returns the vendor's constructor,
	// which reads them once parsed. A flag every vendor takes belongs in
	// Config instead.
	AddFlags func(fs *cli.FlagSet) NewVendorFunc
}

// NewVendorFunc builds a vendor for cfg, valid for it (Config.Validate),
// and the vendor's flags. It may change cfg: NVIDIA's config file sets
// FailOnInitError unless the flag was given. What it starts beside the
// vendor (Ascend's node state) runs until ctx ends.
type NewVendorFunc func(ctx context.Context, cfg *Config) (Vendor, error)

// Registrations are the vendors a binary registers.
type Registrations []Registration

// Names returns the vendors' names, in order.
func (rs Registrations) Names() []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}

// Lookup returns the vendor named name.
func (rs Registrations) Lookup(name string) (Registration, bool) {
	for _, r := range rs {
		if r.Name == name {
			return r, true
		}
	}
	return Registration{}, false
}

// DefaultBackend returns the real device library of the vendor named
// name, "" for no vendor.
func (rs Registrations) DefaultBackend(name string) string {
	if r, ok := rs.Lookup(name); ok && len(r.Backends) > 0 {
		return r.Backends[0]
	}
	return ""
}

// VendorHelp names the vendors for --vendor's help and messages, e.g.
// "nvidia or ascend".
func (rs Registrations) VendorHelp() string { return cli.Alternatives(rs.Names()...) }

// BackendHelp describes the backends for --backend's help, e.g.
// "nvml (nvidia), dcmi (ascend) or simulated".
func (rs Registrations) BackendHelp() string {
	var out []string
	simulated := false
	for _, r := range rs {
		for _, b := range r.Backends {
			if b == accelerator.BackendSimulated {
				simulated = true
				continue
			}
			out = append(out, b+" ("+r.Name+")")
		}
	}
	if simulated {
		out = append(out, accelerator.BackendSimulated)
	}
	return cli.Alternatives(out...)
}
