package nvidia_test

import (
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/accelstack/accelstack/pkg/nvidia"
	"github.com/accelstack/accelstack/pkg/nvidia/simulator"
)

const allReadings = nvidia.ReadingUtilization | nvidia.ReadingTemperature | nvidia.ReadingPower |
	nvidia.ReadingEnergy | nvidia.ReadingSMClock | nvidia.ReadingMemoryClock | nvidia.ReadingMemory |
	nvidia.ReadingPCIeReplays

// TestReadStats reads a simulated MIG-mixed machine: GPUs report every
// reading, including energy (growing with the power draw) and the PCIe
// replay counter; MIG devices report memory only, with utilization marked
// unsupported rather than 0.
func TestReadStats(t *testing.T) {
	sim, err := simulator.New("dgxa100-mig-mixed")
	if err != nil {
		t.Fatal(err)
	}
	m, err := nvidia.Discover(sim)
	if err != nil {
		t.Fatal(err)
	}
	g := m.GPUs[0]
	sim.SetStats(g.UUID, nvidia.Stats{GPUUtilization: 0, PowerMilliwatts: 100000, PCIeReplays: 7, EnergyMillijoules: 1000})
	st, err := nvidia.ReadStats(sim, g.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Supported != allReadings {
		t.Errorf("GPU Supported = %b, want %b", st.Supported, allReadings)
	}
	if !st.Has(nvidia.ReadingUtilization) || st.GPUUtilization != 0 {
		t.Errorf("GPU utilization = %d (supported %v), want a supported 0", st.GPUUtilization, st.Has(nvidia.ReadingUtilization))
	}
	if st.PCIeReplays != 7 {
		t.Errorf("PCIeReplays = %d, want 7", st.PCIeReplays)
	}
	if st.EnergyMillijoules < 1000 {
		t.Errorf("EnergyMillijoules = %d, want at least the 1000 set", st.EnergyMillijoules)
	}
	time.Sleep(50 * time.Millisecond) // 100 W for 50 ms is 5000 mJ
	later, err := nvidia.ReadStats(sim, g.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if later.EnergyMillijoules < st.EnergyMillijoules+4000 {
		t.Errorf("energy went from %d to %d mJ in 50 ms at 100 W, want +5000", st.EnergyMillijoules, later.EnergyMillijoules)
	}
	sim.SetStats(g.UUID, nvidia.Stats{PowerMilliwatts: 0})
	afterDrop, _ := nvidia.ReadStats(sim, g.UUID)
	if afterDrop.EnergyMillijoules < later.EnergyMillijoules {
		t.Errorf("energy counter went back from %d to %d when the power dropped", later.EnergyMillijoules, afterDrop.EnergyMillijoules)
	}

	if len(g.MIGDevices) == 0 {
		t.Fatal("GPU 0 of dgxa100-mig-mixed has no MIG devices")
	}
	parent, _ := sim.DeviceGetHandleByUUID(g.UUID)
	mh, ret := parent.GetMigDeviceHandleByIndex(0)
	if ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	mst, err := nvidia.ReadDeviceStats(mh)
	if err != nil {
		t.Fatal(err)
	}
	if mst.Supported != nvidia.ReadingMemory {
		t.Errorf("MIG device Supported = %b, want memory only (%b)", mst.Supported, nvidia.ReadingMemory)
	}
	if mst.MemoryTotalBytes == 0 {
		t.Error("MIG device memory total is 0")
	}
}

// TestReadStatsNotSupported checks that readings NVML refuses are left
// out of Supported, and a failing memory read is an error.
func TestReadStatsNotSupported(t *testing.T) {
	srv := dgxa100.New()
	sim, err := simulator.NewCustom(srv, nil, nil, func(int) int { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	d := srv.Devices[1].(*server.Device)
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
	st, err := nvidia.ReadStats(sim, d.UUID)
	if err != nil {
		t.Fatal(err)
	}
	want := allReadings &^ (nvidia.ReadingEnergy | nvidia.ReadingPCIeReplays | nvidia.ReadingUtilization)
	if st.Supported != want {
		t.Errorf("Supported = %b, want %b", st.Supported, want)
	}
	if err := sim.SetLost("1", true); err != nil {
		t.Fatal(err)
	}
	st, err = nvidia.ReadStats(sim, d.UUID)
	if err == nil {
		t.Fatal("ReadStats of a lost GPU succeeded")
	}
	if st.Has(nvidia.ReadingMemory) {
		t.Error("a lost GPU's memory reading is marked supported")
	}
}
