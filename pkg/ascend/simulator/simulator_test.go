package simulator_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/accelstack/accelstack/pkg/ascend"
	"github.com/accelstack/accelstack/pkg/ascend/simulator"
)

func TestRunCommand(t *testing.T) {
	sim, err := simulator.New(simulator.ProfileAscend910B8)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line    string
		wantErr bool
	}{
		{"health 2 3 80818692", false},
		{"network 4 5", false},
		{"health 9 3", true},
		{"health x 3", true},
		{"reset 1 1", true},
		{"health 1", true},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			if err := sim.RunCommand(tc.line); (err != nil) != tc.wantErr {
				t.Errorf("RunCommand(%q) = %v, wantErr %v", tc.line, err, tc.wantErr)
			}
		})
	}
	h, _ := sim.Health(2, 0)
	codes, _ := sim.ErrorCodes(2, 0)
	n, _ := sim.NetworkHealth(4, 0)
	if diff := cmp.Diff([]any{ascend.HealthCritical, []uint32{80818692}, ascend.NetworkDown}, []any{h, codes, n}); diff != "" {
		t.Errorf("simulator state (-want +got):\n%s", diff)
	}
}

func TestSimulatorProfiles(t *testing.T) {
	ids910 := []string{"Ascend910-0", "Ascend910-1", "Ascend910-2", "Ascend910-3", "Ascend910-4", "Ascend910-5", "Ascend910-6", "Ascend910-7"}
	tests := []struct {
		profile string
		cards   int
		ids     []string
		phyOf0  int
	}{
		{simulator.ProfileAscend910B8, 8, ids910, 0},
		{simulator.ProfileAscend910B8Dual, 4, ids910, 1},
		{simulator.ProfileAscend310P4, 4, []string{"Ascend310P-0", "Ascend310P-1", "Ascend310P-2", "Ascend310P-3"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.profile, func(t *testing.T) {
			sim, err := simulator.New(tc.profile)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ascend.Discover(sim); err == nil {
				t.Error("Discover before Init: want an error")
			}
			if err := sim.Init(); err != nil {
				t.Fatal(err)
			}
			cards, _ := sim.CardList()
			if len(cards) != tc.cards {
				t.Errorf("%d cards, want %d", len(cards), tc.cards)
			}
			chips, err := ascend.Discover(sim)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, c := range chips {
				ids = append(ids, c.ID())
			}
			if diff := cmp.Diff(tc.ids, ids); diff != "" {
				t.Errorf("IDs (-want +got):\n%s", diff)
			}
			if phy, _ := sim.PhysicalID(0); phy != tc.phyOf0 {
				t.Errorf("physical ID of logical 0 = %d, want %d", phy, tc.phyOf0)
			}
		})
	}
	if _, err := simulator.New("ascend999"); err == nil {
		t.Error("unknown profile: want an error")
	}
}
