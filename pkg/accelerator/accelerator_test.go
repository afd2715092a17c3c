package accelerator

import (
	"os/exec"
	"strings"
	"testing"
)

// TestResourceNames pins the names users' pod specs request: changing one
// breaks their YAML.
func TestResourceNames(t *testing.T) {
	for got, want := range map[string]string{
		NVIDIAGPU:       "nvidia.com/gpu",
		NVIDIAGPUShared: "nvidia.com/gpu.shared",
		NVIDIAMIGPrefix: "nvidia.com/mig-",
		Ascend910:       "huawei.com/Ascend910",
		Ascend310P:      "huawei.com/Ascend310P",
		Ascend310:       "huawei.com/Ascend310",
		VendorNVIDIA:    "nvidia",
		VendorAscend:    "ascend",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestIsAcceleratorAndVendorOf(t *testing.T) {
	for _, tc := range []struct {
		name        string
		accelerator bool
		vendor      string
	}{
		{"nvidia.com/gpu", true, VendorNVIDIA},
		{"nvidia.com/gpu.shared", true, VendorNVIDIA},
		{"nvidia.com/mig-1g.5gb", true, VendorNVIDIA},
		{"nvidia.com/mig-1c.3g.20gb", true, VendorNVIDIA},
		{"nvidia.com/gpu-small", false, VendorNVIDIA}, // a renamed time-sliced resource
		{"huawei.com/Ascend910", true, VendorAscend},
		{"huawei.com/Ascend310P", true, VendorAscend},
		{"huawei.com/Ascend310", true, VendorAscend},
		{"huawei.com/npu-core", false, ""},
		{"cpu", false, ""},
		{"memory", false, ""},
		{"example.com/gpu", false, ""},
	} {
		if got := IsAccelerator(tc.name); got != tc.accelerator {
			t.Errorf("IsAccelerator(%q) = %v, want %v", tc.name, got, tc.accelerator)
		}
		if got := VendorOf(tc.name); got != tc.vendor {
			t.Errorf("VendorOf(%q) = %q, want %q", tc.name, got, tc.vendor)
		}
	}
}

// TestLeaf keeps the package a leaf: the standard library only, directly
// or through its imports.
func TestLeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if imp != "github.com/accelstack/accelstack/pkg/accelerator" {
			t.Errorf("imports %s, want the standard library only", imp)
		}
	}
}
