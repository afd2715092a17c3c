package nvidia

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Reading names one of the readings in Stats.
type Reading uint16

// The readings ReadStats samples; Stats.Supported has a bit for each one
// the device reported.
const (
	// ReadingUtilization is GPUUtilization and MemoryUtilization (NVML
	// reports both at once; MIG devices support neither).
	ReadingUtilization Reading = 1 << iota
	// ReadingTemperature is TemperatureC.
	ReadingTemperature
	// ReadingPower is PowerMilliwatts.
	ReadingPower
	// ReadingEnergy is EnergyMillijoules.
	ReadingEnergy
	// ReadingSMClock is SMClockMHz.
	ReadingSMClock
	// ReadingMemoryClock is MemoryClockMHz.
	ReadingMemoryClock
	// ReadingMemory is MemoryUsedBytes and MemoryTotalBytes.
	ReadingMemory
	// ReadingPCIeReplays is PCIeReplays.
	ReadingPCIeReplays
)

// Stats are the readings the node agent exports for one GPU or MIG
// device. A reading is meaningful only when its bit is in Supported: 0
// with the bit clear means the device could not give it (NVML said not
// supported, or the query failed), not a zero reading.
type Stats struct {
	GPUUtilization    uint32 // percent
	MemoryUtilization uint32 // percent
	TemperatureC      uint32
	PowerMilliwatts   uint32
	// EnergyMillijoules is the energy consumed since the driver was
	// loaded (a counter).
	EnergyMillijoules uint64
	SMClockMHz        uint32
	MemoryClockMHz    uint32
	MemoryUsedBytes   uint64
	MemoryTotalBytes  uint64
	// PCIeReplays is the PCIe replay counter.
	PCIeReplays uint64

	// Supported has a bit for each reading the device reported.
	Supported Reading
}

// Has reports whether the device reported reading r.
func (s Stats) Has(r Reading) bool { return s.Supported&r != 0 }

// ReadStats samples the readings of a GPU or MIG device by UUID; see
// ReadDeviceStats.
func ReadStats(lib nvml.Interface, uuid string) (Stats, error) {
	h, ret := lib.DeviceGetHandleByUUID(uuid)
	if ret != nvml.SUCCESS {
		return Stats{}, nvmlError("opening "+uuid, ret)
	}
	st, err := ReadDeviceStats(h)
	if err != nil {
		return st, fmt.Errorf("reading memory of %s: %w", uuid, err)
	}
	return st, nil
}

// ReadDeviceStats samples the readings of a GPU or MIG device handle. A
// reading the device does not give (any NVML error) is left out of
// Supported; the memory reading is the device check, so its failure is
// returned (as the nvml.Return).
func ReadDeviceStats(h nvml.Device) (Stats, error) {
	var st Stats
	if u, ret := h.GetUtilizationRates(); ret == nvml.SUCCESS {
		st.GPUUtilization, st.MemoryUtilization = u.Gpu, u.Memory
		st.Supported |= ReadingUtilization
	}
	if t, ret := h.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		st.TemperatureC = t
		st.Supported |= ReadingTemperature
	}
	if p, ret := h.GetPowerUsage(); ret == nvml.SUCCESS {
		st.PowerMilliwatts = p
		st.Supported |= ReadingPower
	}
	if e, ret := h.GetTotalEnergyConsumption(); ret == nvml.SUCCESS {
		st.EnergyMillijoules = e
		st.Supported |= ReadingEnergy
	}
	if c, ret := h.GetClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
		st.SMClockMHz = c
		st.Supported |= ReadingSMClock
	}
	if c, ret := h.GetClockInfo(nvml.CLOCK_MEM); ret == nvml.SUCCESS {
		st.MemoryClockMHz = c
		st.Supported |= ReadingMemoryClock
	}
	if r, ret := h.GetPcieReplayCounter(); ret == nvml.SUCCESS && r >= 0 {
		st.PCIeReplays = uint64(r)
		st.Supported |= ReadingPCIeReplays
	}
	m, ret := h.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return st, ret
	}
	st.MemoryUsedBytes, st.MemoryTotalBytes = m.Used, m.Total
	st.Supported |= ReadingMemory
	return st, nil
}
