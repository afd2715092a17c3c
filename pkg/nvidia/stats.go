package nvidia

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Stats are the readings the node agent exports for one GPU.
type Stats struct {
	GPUUtilization    uint32 // percent
	MemoryUtilization uint32 // percent
	TemperatureC      uint32
	PowerMilliwatts   uint32
	SMClockMHz        uint32
	MemoryClockMHz    uint32
	MemoryUsedBytes   uint64
	MemoryTotalBytes  uint64
}

// ReadStats samples a GPU's readings; readings NVML does not support are
// left zero, other failures are returned.
func ReadStats(lib nvml.Interface, uuid string) (Stats, error) {
	h, ret := lib.DeviceGetHandleByUUID(uuid)
	if ret != nvml.SUCCESS {
		return Stats{}, nvmlError("opening "+uuid, ret)
	}
	var st Stats
	if u, ret := h.GetUtilizationRates(); ret == nvml.SUCCESS {
		st.GPUUtilization, st.MemoryUtilization = u.Gpu, u.Memory
	}
	if t, ret := h.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		st.TemperatureC = t
	}
	if p, ret := h.GetPowerUsage(); ret == nvml.SUCCESS {
		st.PowerMilliwatts = p
	}
	if c, ret := h.GetClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
		st.SMClockMHz = c
	}
	if c, ret := h.GetClockInfo(nvml.CLOCK_MEM); ret == nvml.SUCCESS {
		st.MemoryClockMHz = c
	}
	m, ret := h.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return st, nvmlError("reading memory of "+uuid, ret)
	}
	st.MemoryUsedBytes, st.MemoryTotalBytes = m.Used, m.Total
	return st, nil
}

func newTimer(ms uint32) *time.Timer { return time.NewTimer(time.Duration(ms) * time.Millisecond) }
