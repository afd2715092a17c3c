package deviceplugin

import (
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	testCases := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "nvidia nvml", cfg: Config{Vendor: "nvidia", Backend: "nvml"}},
		{name: "nvidia simulated", cfg: Config{Vendor: "nvidia", Backend: "simulated", Simulate: "dgxa100"}},
		{name: "ascend dcmi", cfg: Config{Vendor: "ascend", Backend: "dcmi"}},
		{name: "unknown vendor", cfg: Config{Vendor: "amd", Backend: "nvml"}, wantErr: "--vendor"},
		{name: "wrong backend", cfg: Config{Vendor: "ascend", Backend: "nvml"}, wantErr: "--backend"},
		{name: "simulated without profile", cfg: Config{Vendor: "nvidia", Backend: "simulated"}, wantErr: "--simulate is required"},
		{name: "profile without simulated", cfg: Config{Vendor: "nvidia", Backend: "nvml", Simulate: "dgxh100"}, wantErr: "needs --backend=simulated"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
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
