package nvidia

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// CheckDevice is the NVML check a device must pass to heal: the memory of
// the GPU (and of the MIG device, for one) must be readable. A UUID not on
// m passes.
func CheckDevice(lib nvml.Interface, m *Machine, uuid string) error {
	for _, g := range m.GPUs {
		if g.UUID == uuid {
			return checkGPU(lib, uuid)
		}
		for _, d := range g.MIGDevices {
			if d.UUID == uuid {
				if err := checkGPU(lib, g.UUID); err != nil {
					return err
				}
				return checkMIG(lib, g.UUID, uuid)
			}
		}
	}
	return nil
}

func checkGPU(lib nvml.Interface, uuid string) error {
	d, ret := lib.DeviceGetHandleByUUID(uuid)
	if ret != nvml.SUCCESS {
		return nvmlError("opening "+uuid, ret)
	}
	if _, ret := d.GetMemoryInfo(); ret != nvml.SUCCESS {
		return nvmlError("reading memory of "+uuid, ret)
	}
	return nil
}

func checkMIG(lib nvml.Interface, parent, uuid string) error {
	p, ret := lib.DeviceGetHandleByUUID(parent)
	if ret != nvml.SUCCESS {
		return nvmlError("opening "+parent, ret)
	}
	max, ret := p.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return nvmlError("counting MIG devices of "+parent, ret)
	}
	for j := 0; j < max; j++ {
		m, ret := p.GetMigDeviceHandleByIndex(j)
		if ret != nvml.SUCCESS {
			continue
		}
		if u, _ := m.GetUUID(); u == uuid {
			if _, ret := m.GetMemoryInfo(); ret != nvml.SUCCESS {
				return nvmlError("reading memory of "+uuid, ret)
			}
			return nil
		}
	}
	return nvmlError("finding "+uuid, nvml.ERROR_NOT_FOUND)
}
