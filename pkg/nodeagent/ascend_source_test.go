package nodeagent

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/accelstack/accelstack/pkg/ascend"
	ascendsim "github.com/accelstack/accelstack/pkg/ascend/simulator"
)

func TestAscendSource(t *testing.T) {
	sim, err := ascendsim.New(ascendsim.ProfileAscend910B8)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.SetHealth(3, ascend.HealthCritical); err != nil {
		t.Fatal(err)
	}
	if err := sim.SetUtilization(1, 77); err != nil {
		t.Fatal(err)
	}
	src := NewAscendSource("", sim)
	defer src.Close()
	snap, err := src.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID      string
		Healthy bool
		Util    float64
		HBMUsed float64
	}
	var got []row
	for _, d := range snap.Devices[:4] {
		u, _ := d.Get(FieldUtilization)
		h, _ := d.Get(FieldHBMUsedBytes)
		got = append(got, row{d.ID, d.Healthy, u, h})
	}
	const hbm = 3 << 30
	want := []row{{"Ascend910-0", true, 0, hbm}, {"Ascend910-1", true, 77, hbm}, {"Ascend910-2", true, 0, hbm}, {"Ascend910-3", false, 0, hbm}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("devices (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{LabelAscendServerType: "Ascend910B-20", LabelAscendNPUCount: "8"}, snap.NodeLabels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

func TestAscendSourceNoLibrary(t *testing.T) {
	src := NewAscendSource(t.TempDir()+"/libdcmi.so", nil)
	if _, err := src.Collect(context.Background()); err == nil {
		t.Error("Collect without a library: want an error")
	}
}
