package deviceplugin

import (
	"strings"
	"testing"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

// testVendors registers the vendors by name and backends, as the plugin
// packages do (which this package cannot import).
var testVendors = Registrations{
	{Name: accelerator.VendorNVIDIA, Backends: []string{accelerator.BackendNVML, accelerator.BackendSimulated}},
	{Name: accelerator.VendorAscend, Backends: []string{accelerator.BackendDCMI, accelerator.BackendSimulated}},
}

func TestConfigValidate(t *testing.T) {
	testCases := []struct {
		name    string
		vendors Registrations
		cfg     Config
		wantErr string
	}{
		{name: "nvidia nvml", cfg: Config{Vendor: "nvidia", Backend: "nvml"}},
		{name: "nvidia simulated", cfg: Config{Vendor: "nvidia", Backend: "simulated", Simulate: "dgxa100"}},
		{name: "ascend dcmi", cfg: Config{Vendor: "ascend", Backend: "dcmi"}},
		{name: "unknown vendor", cfg: Config{Vendor: "amd", Backend: "nvml"}, wantErr: `invalid value "amd" for flag --vendor: must be nvidia or ascend`},
		{name: "unknown vendor of three", vendors: append(testVendors, Registration{Name: "hygon", Backends: []string{"dtk"}}),
			cfg: Config{Vendor: "amd", Backend: "nvml"}, wantErr: "must be nvidia, ascend or hygon"},
		{name: "wrong backend", cfg: Config{Vendor: "ascend", Backend: "nvml"}, wantErr: `invalid value "nvml" for flag --backend with --vendor=ascend: must be one of [dcmi simulated]`},
		{name: "simulated without profile", cfg: Config{Vendor: "nvidia", Backend: "simulated"}, wantErr: "--simulate is required"},
		{name: "profile without simulated", cfg: Config{Vendor: "nvidia", Backend: "nvml", Simulate: "dgxh100"}, wantErr: "needs --backend=simulated"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			vendors := tc.vendors
			if vendors == nil {
				vendors = testVendors
			}
			err := tc.cfg.Validate(vendors)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestRegistrations(t *testing.T) {
	if got, want := strings.Join(testVendors.Names(), ","), "nvidia,ascend"; got != want {
		t.Errorf("Names() = %s, want %s", got, want)
	}
	for vendor, want := range map[string]string{"nvidia": "nvml", "ascend": "dcmi", "amd": ""} {
		if got := testVendors.DefaultBackend(vendor); got != want {
			t.Errorf("DefaultBackend(%s) = %q, want %q", vendor, got, want)
		}
	}
	if got, want := testVendors.VendorHelp(), "nvidia or ascend"; got != want {
		t.Errorf("VendorHelp() = %q, want %q", got, want)
	}
	if got, want := testVendors.BackendHelp(), "nvml (nvidia), dcmi (ascend) or simulated"; got != want {
		t.Errorf("BackendHelp() = %q, want %q", got, want)
	}
}
