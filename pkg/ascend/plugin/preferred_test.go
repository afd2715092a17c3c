package plugin_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/ascend/simulator"
	"github.com/accelstack/accelstack/test/testutil"
)

// TestGetPreferredAllocation: the advisory pick keeps must-include chips
// and fills up by physical ID; inputs the kubelet would never send are
// refused as on the NVIDIA path.
func TestGetPreferredAllocation(t *testing.T) {
	k, _ := startPlugin(t, simulated(simulator.ProfileAscend910B8))
	ctx := testutil.Context(t)
	p, err := k.WaitPlugin(ctx, accelerator.Ascend910)
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"Ascend910-7", "Ascend910-2", "Ascend910-5", "Ascend910-0"}
	tests := []struct {
		name      string
		available []string
		must      []string
		size      int
		want      []string
		wantCode  codes.Code
	}{
		{"lowest physical IDs", all, nil, 2, []string{"Ascend910-0", "Ascend910-2"}, codes.OK},
		{"must-include first", all, []string{"Ascend910-7"}, 2, []string{"Ascend910-7", "Ascend910-0"}, codes.OK},
		{"size zero", all, nil, 0, nil, codes.InvalidArgument},
		{"size above available", all, nil, 5, nil, codes.InvalidArgument},
		{"unknown ID", []string{"Ascend910-0", "Ascend910-99"}, nil, 1, nil, codes.InvalidArgument},
		{"foreign kind", []string{"Ascend310P-0", "Ascend910-1"}, nil, 1, nil, codes.InvalidArgument},
		{"duplicate available", []string{"Ascend910-1", "Ascend910-1"}, nil, 1, nil, codes.InvalidArgument},
		{"must-include not available", all, []string{"Ascend910-3"}, 1, nil, codes.InvalidArgument},
		{"must-include twice", all, []string{"Ascend910-0", "Ascend910-0"}, 2, nil, codes.InvalidArgument},
		{"more must-include than size", all, []string{"Ascend910-0", "Ascend910-2"}, 1, nil, codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.GetPreferredAllocation(ctx, tc.available, tc.must, tc.size)
			if code := status.Code(err); code != tc.wantCode {
				t.Fatalf("GetPreferredAllocation: code %v (%v), want %v", code, err, tc.wantCode)
			}
			if diff := cmp.Diff(tc.want, got); err == nil && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
