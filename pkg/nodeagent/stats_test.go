package nodeagent

import (
	"context"
	"strconv"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/accelstack/accelstack/pkg/nvidia"
	"github.com/accelstack/accelstack/pkg/nvidia/simulator"
)

// TestMIGUtilizationAbsent collects a simulated MIG-mixed machine: whole
// GPUs have utilization, energy and PCIe replay series with the
// simulator's values; MIG devices, whose utilization NVML does not
// support, have no utilization series at all (not a 0), but keep their
// own memory and the parent's energy.
func TestMIGUtilizationAbsent(t *testing.T) {
	src, sim := newSimSource(t, "dgxa100-mig-mixed", "")
	c := NewCollector("n", []Source{src}, nil, nil)
	snap := c.CollectOnce(context.Background())
	var gpu7, mig *Device
	for i := range snap.Devices {
		d := &snap.Devices[i]
		if d.MIG == nil && d.Index == "7" {
			gpu7 = d
		}
		if d.MIG != nil && mig == nil {
			mig = d
		}
	}
	if gpu7 == nil || mig == nil {
		t.Fatalf("no whole GPU 7 or no MIG device in %d devices", len(snap.Devices))
	}
	sim.SetStats(gpu7.ID, nvidia.Stats{GPUUtilization: 42, PowerMilliwatts: 1000, PCIeReplays: 3, EnergyMillijoules: 5000})
	c.CollectOnce(context.Background())
	all := gather(t, c)

	whole := map[string]string{"UUID": gpu7.ID, "GPU_I_ID": ""}
	for name, want := range map[string]float64{
		"DCGM_FI_DEV_GPU_UTIL":                 42,
		"DCGM_FI_DEV_PCIE_REPLAY_COUNTER":      3,
		"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": 5000,
	} {
		got := find(all, name, whole)
		if len(got) != 1 {
			t.Errorf("%s of GPU 7: %d series, want 1", name, len(got))
			continue
		}
		if name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" && got[0].value >= want && got[0].value < want+1000 {
			continue
		}
		if got[0].value != want {
			t.Errorf("%s of GPU 7 = %v, want %v", name, got[0].value, want)
		}
	}

	inst := map[string]string{"UUID": mig.MIG.ParentID, "GPU_I_ID": strconv.Itoa(mig.MIG.GPUInstance)}
	for _, name := range []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL"} {
		if got := find(all, name, inst); len(got) != 0 {
			t.Errorf("%s of MIG device %s: %v, want no series", name, mig.ID, got)
		}
	}
	for _, name := range []string{"DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"} {
		if got := find(all, name, inst); len(got) != 1 {
			t.Errorf("%s of MIG device %s: %d series, want 1", name, mig.ID, len(got))
		}
	}
}

// TestUnsupportedReadingsAbsent gives a GPU that refuses energy, PCIe and
// utilization readings: those series are absent for it, present for the
// others.
func TestUnsupportedReadingsAbsent(t *testing.T) {
	srv := dgxa100.New()
	sim, err := simulator.NewCustom(srv, nil, nil, func(int) int { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	d := srv.Devices[1].(*server.Device)
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
	o := nvidia.DefaultOptions()
	o.Backend = "simulated"
	src, err := NewNVIDIASource(context.Background(), o, sim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	c := NewCollector("n", []Source{src}, nil, nil)
	c.CollectOnce(context.Background())
	all := gather(t, c)
	for _, name := range []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"} {
		if got := find(all, name, map[string]string{"gpu": "1"}); len(got) != 0 {
			t.Errorf("%s of GPU 1 (not supported): %v, want no series", name, got)
		}
		if got := find(all, name, map[string]string{"gpu": "0"}); len(got) != 1 {
			t.Errorf("%s of GPU 0: %d series, want 1", name, len(got))
		}
	}
	if got := find(all, "accelstack_gpu_healthy", map[string]string{"gpu": "1"}); len(got) != 1 || got[0].value != 1 {
		t.Errorf("accelstack_gpu_healthy of GPU 1 = %v, want 1 (unsupported readings are not a failure)", got)
	}
}
