package mig

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

var (
	p1g5  = Profile{GPUSlices: 1, ComputeSlices: 1, MemoryGB: 5}
	p3g20 = Profile{GPUSlices: 3, ComputeSlices: 3, MemoryGB: 20}
)

func TestAssign(t *testing.T) {
	whole := GPU{ID: "GPU-a"}
	uniform := func(id string) GPU {
		return GPU{ID: id, MIGEnabled: true, Devices: []Device{{ID: id + "-0", Profile: p1g5}, {ID: id + "-1", Profile: p1g5}}}
	}
	mixed := GPU{ID: "GPU-m", MIGEnabled: true, Devices: []Device{{ID: "MIG-0", Profile: p3g20}, {ID: "MIG-1", Profile: p1g5}}}
	testCases := []struct {
		name     string
		strategy string
		gpus     []GPU
		want     map[string][]string
		wantErr  string
	}{
		{name: "none ignores MIG", strategy: StrategyNone, gpus: []GPU{whole, mixed}, want: map[string][]string{accelerator.NVIDIAGPU: {"GPU-a", "GPU-m"}}},
		{name: "empty strategy is none", strategy: "", gpus: []GPU{whole}, want: map[string][]string{accelerator.NVIDIAGPU: {"GPU-a"}}},
		{name: "mixed", strategy: StrategyMixed, gpus: []GPU{whole, mixed}, want: map[string][]string{
			accelerator.NVIDIAGPU: {"GPU-a"}, "nvidia.com/mig-3g.20gb": {"MIG-0"}, "nvidia.com/mig-1g.5gb": {"MIG-1"}}},
		{name: "single uniform", strategy: StrategySingle, gpus: []GPU{uniform("GPU-x"), uniform("GPU-y")}, want: map[string][]string{
			accelerator.NVIDIAGPU: {"GPU-x-0", "GPU-x-1", "GPU-y-0", "GPU-y-1"}}},
		{name: "single without MIG", strategy: StrategySingle, gpus: []GPU{whole}, want: map[string][]string{accelerator.NVIDIAGPU: {"GPU-a"}}},
		{name: "single with two profiles", strategy: StrategySingle, gpus: []GPU{mixed}, wantErr: "more than one MIG device type present (1g.5gb, 3g.20gb)"},
		{name: "single with MIG on some GPUs", strategy: StrategySingle, gpus: []GPU{whole, uniform("GPU-x")}, wantErr: "enabled on 1 GPUs and disabled on 1"},
		{name: "unknown", strategy: "auto", gpus: []GPU{whole}, wantErr: `unknown mig strategy "auto"`},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Assign(tc.strategy, tc.gpus)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Assign() error = %v, want %q", err, tc.wantErr)
				}
				if tc.strategy == StrategySingle && !errors.Is(err, ErrNonUniform) {
					t.Errorf("Assign() error %v does not wrap ErrNonUniform", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Assign() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProfileNames(t *testing.T) {
	const gib = 1 << 30
	testCases := []struct {
		name         string
		p            Profile
		wantString   string
		wantResource string
	}{
		{"1g.5gb", Profile{1, 1, MemoryGB(40*gib, 4864), false}, "1g.5gb", "nvidia.com/mig-1g.5gb"},
		{"2g.10gb", Profile{2, 2, MemoryGB(40*gib, 9856), false}, "2g.10gb", "nvidia.com/mig-2g.10gb"},
		{"3g.20gb", Profile{3, 3, MemoryGB(40*gib, 19968), false}, "3g.20gb", "nvidia.com/mig-3g.20gb"},
		{"7g.40gb", Profile{7, 7, MemoryGB(40*gib, 40192), false}, "7g.40gb", "nvidia.com/mig-7g.40gb"},
		{"h100 1g.10gb", Profile{1, 1, MemoryGB(80*gib, 10240), false}, "1g.10gb", "nvidia.com/mig-1g.10gb"},
		{"media extensions", Profile{1, 1, 5, true}, "1g.5gb+me", "nvidia.com/mig-1g.5gb.me"},
		{"compute subset", Profile{2, 1, 10, false}, "1c.2g.10gb", "nvidia.com/mig-1c.2g.10gb"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.String(); got != tc.wantString {
				t.Errorf("String() = %q, want %q", got, tc.wantString)
			}
			if got := tc.p.ResourceName(); got != tc.wantResource {
				t.Errorf("ResourceName() = %q, want %q", got, tc.wantResource)
			}
		})
	}
	if got := MemoryGB(0, 10); got != 0 {
		t.Errorf("MemoryGB(0, 10) = %d, want 0", got)
	}
}
