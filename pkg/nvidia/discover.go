package nvidia

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/accelstack/accelstack/pkg/cstring"
	"github.com/accelstack/accelstack/pkg/mig"
)

// nvmlError wraps an NVML return code with what was being done.
func nvmlError(what string, ret nvml.Return) error {
	return fmt.Errorf("%s: %w", what, ret)
}

// ErrNoDevices is returned by Discover when NVML reports no GPU.
var ErrNoDevices = errors.New("NVML reports no GPU")

// Discover reads the GPUs, their MIG devices and the topology through lib,
// which must be initialised.
func Discover(lib nvml.Interface) (*Machine, error) {
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, nvmlError("counting GPUs", ret)
	}
	if n == 0 {
		return nil, ErrNoDevices
	}
	m := &Machine{}
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		m.DriverVersion = v
	}
	handles := make([]nvml.Device, n)
	for i := 0; i < n; i++ {
		h, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, nvmlError(fmt.Sprintf("getting GPU %d", i), ret)
		}
		handles[i] = h
		g, err := discoverGPU(h, i)
		if err != nil {
			return nil, err
		}
		m.GPUs = append(m.GPUs, *g)
	}
	m.NVLink = make([][]bool, n)
	for i := range handles {
		m.NVLink[i] = make([]bool, n)
		for j := range handles {
			if i == j {
				continue
			}
			st, ret := handles[i].GetP2PStatus(handles[j], nvml.P2P_CAPS_INDEX_NVLINK)
			m.NVLink[i][j] = ret == nvml.SUCCESS && st == nvml.P2P_STATUS_OK
		}
	}
	return m, nil
}

func discoverGPU(h nvml.Device, i int) (*GPU, error) {
	g := &GPU{Device: Device{Index: strconv.Itoa(i), GPUIndex: i, NUMANode: -1}}
	var ret nvml.Return
	if g.UUID, ret = h.GetUUID(); ret != nvml.SUCCESS {
		return nil, nvmlError(fmt.Sprintf("reading UUID of GPU %d", i), ret)
	}
	if g.Name, ret = h.GetName(); ret != nvml.SUCCESS {
		return nil, nvmlError(fmt.Sprintf("reading name of GPU %d", i), ret)
	}
	mem, ret := h.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return nil, nvmlError(fmt.Sprintf("reading memory of GPU %d", i), ret)
	}
	g.MemoryBytes = mem.Total
	if g.Minor, ret = h.GetMinorNumber(); ret != nvml.SUCCESS {
		g.Minor = i
	}
	if pci, ret := h.GetPciInfo(); ret == nvml.SUCCESS {
		g.PCIBusID = cstring.String(pci.BusId[:])
	}
	if node, ret := h.GetNumaNodeId(); ret == nvml.SUCCESS {
		g.NUMANode = node
	}
	if major, minor, ret := h.GetCudaComputeCapability(); ret == nvml.SUCCESS {
		g.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
	}
	cur, _, ret := h.GetMigMode()
	g.MIGEnabled = ret == nvml.SUCCESS && cur == nvml.DEVICE_MIG_ENABLE
	if !g.MIGEnabled {
		return g, nil
	}
	devs, err := discoverMIG(h, &g.Device)
	if err != nil {
		return nil, err
	}
	g.MIGDevices = devs
	return g, nil
}

func discoverMIG(parent nvml.Device, p *Device) ([]Device, error) {
	max, ret := parent.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return nil, nvmlError(fmt.Sprintf("reading MIG device count of GPU %d", p.GPUIndex), ret)
	}
	var out []Device
	for j := 0; j < max; j++ {
		h, ret := parent.GetMigDeviceHandleByIndex(j)
		if ret == nvml.ERROR_NOT_FOUND || ret == nvml.ERROR_INVALID_ARGUMENT {
			continue
		}
		if ret != nvml.SUCCESS {
			return nil, nvmlError(fmt.Sprintf("getting MIG device %d:%d", p.GPUIndex, j), ret)
		}
		d, err := describeMIG(parent, h, p, j)
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, nil
}

func describeMIG(parent, h nvml.Device, p *Device, j int) (*Device, error) {
	where := fmt.Sprintf("MIG device %d:%d", p.GPUIndex, j)
	uuid, ret := h.GetUUID()
	if ret != nvml.SUCCESS {
		return nil, nvmlError("reading UUID of "+where, ret)
	}
	giID, ret := h.GetGpuInstanceId()
	if ret != nvml.SUCCESS {
		return nil, nvmlError("reading GPU instance of "+where, ret)
	}
	ciID, ret := h.GetComputeInstanceId()
	if ret != nvml.SUCCESS {
		return nil, nvmlError("reading compute instance of "+where, ret)
	}
	gi, ret := parent.GetGpuInstanceById(giID)
	if ret != nvml.SUCCESS {
		return nil, nvmlError("opening GPU instance of "+where, ret)
	}
	giInfo, ret := gi.GetInfo()
	if ret != nvml.SUCCESS {
		return nil, nvmlError("reading GPU instance of "+where, ret)
	}
	giProf, ret := parent.GetGpuInstanceProfileInfo(int(giInfo.ProfileId))
	if ret != nvml.SUCCESS {
		return nil, nvmlError("reading GPU instance profile of "+where, ret)
	}
	ci, ret := gi.GetComputeInstanceById(ciID)
	if ret != nvml.SUCCESS {
		return nil, nvmlError("opening compute instance of "+where, ret)
	}
	ciInfo, ret := ci.GetInfo()
	if ret != nvml.SUCCESS {
		return nil, nvmlError("reading compute instance of "+where, ret)
	}
	ciProf, ret := gi.GetComputeInstanceProfileInfo(int(ciInfo.ProfileId), nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if ret != nvml.SUCCESS {
		return nil, nvmlError("reading compute instance profile of "+where, ret)
	}
	d := *p
	d.UUID = uuid
	d.Index = MIGIndex(p.GPUIndex, j)
	d.MemoryBytes = giProf.MemorySizeMB << 20
	d.MIG = &MIGInfo{
		ParentUUID:      p.UUID,
		GPUInstance:     giID,
		ComputeInstance: ciID,
		Profile: mig.Profile{
			GPUSlices:       int(giProf.SliceCount),
			ComputeSlices:   int(ciProf.SliceCount),
			MemoryGB:        mig.MemoryGB(p.MemoryBytes, giProf.MemorySizeMB),
			MediaExtensions: giProf.Id == nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1 || giProf.Id == nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1,
		},
	}
	return &d, nil
}
