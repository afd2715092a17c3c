package simulator

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// extendDevice fills the mock device functions the DGX mocks leave unset.
func (s *Simulator) extendDevice(d *server.Device, i int, nvlink [][]bool, node int) {
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
		p := nvml.PciInfo{PciDeviceId: d.Config.PciDeviceId, Bus: uint32(i)}
		copy(p.BusId[:], toInt8(d.PciBusID))
		return p, nvml.SUCCESS
	}
	d.GetNumaNodeIdFunc = func() (int, nvml.Return) { return node, nvml.SUCCESS }
	d.GetP2PStatusFunc = func(other nvml.Device, idx nvml.GpuP2PCapsIndex) (nvml.GpuP2PStatus, nvml.Return) {
		o, ok := other.(*server.Device)
		if !ok || idx != nvml.P2P_CAPS_INDEX_NVLINK || o.Index >= len(nvlink) || i >= len(nvlink) || !nvlink[i][o.Index] {
			return nvml.P2P_STATUS_NOT_SUPPORTED, nvml.SUCCESS
		}
		return nvml.P2P_STATUS_OK, nvml.SUCCESS
	}
	d.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
		return nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError | nvml.EventTypeSingleBitEccError, nvml.SUCCESS
	}
	d.RegisterEventsFunc = func(types uint64, set nvml.EventSet) nvml.Return {
		es, ok := set.(*simEventSet)
		if !ok {
			return nvml.ERROR_INVALID_ARGUMENT
		}
		es.mu.Lock()
		es.devices[d.UUID] = d
		es.mu.Unlock()
		return nvml.SUCCESS
	}
	orig := d.GetMemoryInfoFunc
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		if s.isLost(d.UUID) {
			return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST
		}
		return orig()
	}
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		st := s.statsOf(d.UUID)
		return nvml.Utilization{Gpu: st.GPUUtilization, Memory: st.MemoryUtilization}, nvml.SUCCESS
	}
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) {
		return s.statsOf(d.UUID).TemperatureC, nvml.SUCCESS
	}
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return s.statsOf(d.UUID).PowerMilliwatts, nvml.SUCCESS }
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return s.energyOf(d.UUID), nvml.SUCCESS }
	d.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return int(s.statsOf(d.UUID).PCIeReplays), nvml.SUCCESS }
	d.GetClockInfoFunc = func(t nvml.ClockType) (uint32, nvml.Return) {
		if t == nvml.CLOCK_MEM {
			return s.statsOf(d.UUID).MemoryClockMHz, nvml.SUCCESS
		}
		return s.statsOf(d.UUID).SMClockMHz, nvml.SUCCESS
	}
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	d.GetMigDeviceHandleByIndexFunc = func(j int) (nvml.Device, nvml.Return) {
		s.mu.Lock()
		defer s.mu.Unlock()
		migs := s.migs[d.UUID]
		if j < 0 || j >= len(migs) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return migs[j], nvml.SUCCESS
	}
	d.GetGpuInstanceByIdFunc = func(id int) (nvml.GpuInstance, nvml.Return) {
		d.RLock()
		defer d.RUnlock()
		for gi := range d.GpuInstances {
			if int(gi.Info.Id) == id {
				return gi, nvml.SUCCESS
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
}

// createMIG enables MIG on d and creates one GPU instance with a full
// compute instance per entry of shape, plus the MIG device handles.
// MIG device UUIDs derive from seed (the profile name or the GPU's UUID)
// and the GPU and MIG device indices.
func (s *Simulator) createMIG(d *server.Device, seed string, index int, shape []int) error {
	if ret, _ := d.SetMigMode(nvml.DEVICE_MIG_ENABLE); ret != nvml.SUCCESS {
		return fmt.Errorf("enabling MIG on simulated GPU %d: %w", index, ret)
	}
	for j, slices := range shape {
		ids, ok := giProfileBySlices[slices]
		if !ok {
			return fmt.Errorf("no MIG profile with %d slices", slices)
		}
		giProf, ret := d.GetGpuInstanceProfileInfo(ids[0])
		if ret != nvml.SUCCESS {
			return fmt.Errorf("GPU instance profile %d: %w", ids[0], ret)
		}
		gih, _ := d.CreateGpuInstance(&giProf)
		gi := gih.(*server.GpuInstance)
		ciProf, ret := gi.GetComputeInstanceProfileInfo(ids[1], nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("compute instance profile %d: %w", ids[1], ret)
		}
		cih, _ := gi.CreateComputeInstance(&ciProf)
		ci := cih.(*server.ComputeInstance)
		gi.GetComputeInstanceByIdFunc = func(id int) (nvml.ComputeInstance, nvml.Return) {
			gi.RLock()
			defer gi.RUnlock()
			for c := range gi.ComputeInstances {
				if int(c.Info.Id) == id {
					return c, nvml.SUCCESS
				}
			}
			return nil, nvml.ERROR_NOT_FOUND
		}
		uuid := simMIGUUID(seed, index, j)
		giID, ciID, memMB := int(gi.Info.Id), int(ci.Info.Id), giProf.MemorySizeMB
		parent := d
		md := &mock.Device{}
		md.GetUUIDFunc = func() (string, nvml.Return) { return uuid, nvml.SUCCESS }
		md.GetGpuInstanceIdFunc = func() (int, nvml.Return) { return giID, nvml.SUCCESS }
		md.GetComputeInstanceIdFunc = func() (int, nvml.Return) { return ciID, nvml.SUCCESS }
		md.IsMigDeviceHandleFunc = func() (bool, nvml.Return) { return true, nvml.SUCCESS }
		md.GetDeviceHandleFromMigDeviceHandleFunc = func() (nvml.Device, nvml.Return) { return parent, nvml.SUCCESS }
		// Like NVML on a MIG device handle: no utilization, temperature,
		// power, energy, clocks or PCIe counters (those are the parent's).
		md.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
		md.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		md.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		md.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		md.GetClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		md.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		md.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			if s.isLost(uuid) || s.isLost(parent.UUID) {
				return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST
			}
			return nvml.Memory{Total: memMB << 20, Free: memMB << 20}, nvml.SUCCESS
		}
		s.migs[d.UUID] = append(s.migs[d.UUID], md)
	}
	return nil
}

func toInt8(s string) []int8 {
	out := make([]int8, len(s))
	for i := range s {
		out[i] = int8(s[i])
	}
	return out
}
