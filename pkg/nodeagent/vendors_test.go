package nodeagent

import (
	"slices"
	"strings"
	"testing"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

func TestBackends(t *testing.T) {
	if got, want := strings.Join(Backends(), ","), "nvml,dcmi,simulated"; got != want {
		t.Errorf("Backends() = %s, want %s", got, want)
	}
}

func TestVendorFor(t *testing.T) {
	for _, tc := range []struct {
		backend, simulate string
		want, wantErr     string
	}{
		{backend: "nvml", want: accelerator.VendorNVIDIA},
		{backend: "dcmi", want: accelerator.VendorAscend},
		{backend: "simulated", simulate: "dgxa100", want: accelerator.VendorNVIDIA},
		{backend: "simulated", simulate: "ascend910b-8", want: accelerator.VendorAscend},
		{backend: "simulated", simulate: "ascend310p-4", want: accelerator.VendorAscend},
		{backend: "simulated", simulate: "dgx1", wantErr: `unknown simulated profile "dgx1": must be one of dgxa100,`},
		{backend: "rocm", wantErr: `unknown backend "rocm": must be one of nvml, dcmi, simulated`},
	} {
		v, err := vendorFor(Config{Backend: tc.backend, Simulate: tc.simulate})
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("vendorFor(%s, %q) = %v, want error containing %q", tc.backend, tc.simulate, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("vendorFor(%s, %q): %v", tc.backend, tc.simulate, err)
		case v.name != tc.want:
			t.Errorf("vendorFor(%s, %q) = %s, want %s", tc.backend, tc.simulate, v.name, tc.want)
		}
	}
}

// TestVendorProfiles checks that a simulated profile names one vendor.
func TestVendorProfiles(t *testing.T) {
	seen := map[string]string{}
	for _, v := range vendors {
		if len(v.profiles()) == 0 {
			t.Errorf("vendor %s has no simulated profile", v.name)
		}
		for _, p := range v.profiles() {
			if other, ok := seen[p]; ok {
				t.Errorf("profile %s is both %s's and %s's", p, other, v.name)
			}
			seen[p] = v.name
		}
	}
	if !slices.Contains(Backends(), accelerator.BackendSimulated) {
		t.Error("no simulated backend")
	}
}
