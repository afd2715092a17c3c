package simulator

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxb200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/accelstack/accelstack/pkg/nvidia"
)

// Simulator is a simulated NVIDIA machine: one of go-nvml's mock DGX
// servers, extended with what the mocks lack: MIG device handles, XID
// events that can be injected, NVLink and NUMA topology, PCI bus ids, and
// utilization, temperature, power and clock readings.
type Simulator struct {
	*server.Server

	mu    sync.Mutex
	sets  map[*simEventSet]struct{}
	lost  map[string]bool           // UUIDs whose NVML queries fail
	migs  map[string][]*mock.Device // parent UUID -> MIG device handles
	stats map[string]nvidia.Stats
	// energy integrates each GPU's power draw into its energy counter.
	energy map[string]*energyMeter
}

// energyMeter is a simulated energy counter: the energy counted up to at,
// plus the power draw since.
type energyMeter struct {
	millijoules uint64
	at          time.Time
}

var _ nvml.Interface = (*Simulator)(nil)

// profile describes a simulated machine.
type profile struct {
	newServer func() *server.Server
	// layouts gives the MIG layout per GPU index (GPU instance slice
	// counts); GPUs without an entry have MIG disabled.
	layouts map[int][]int
}

var profiles = map[string]profile{
	"dgxa100":            {newServer: dgxa100.New},
	"dgxa100-mig-mixed":  {newServer: dgxa100.New, layouts: mixedLayout()},
	"dgxa100-mig-single": {newServer: dgxa100.New, layouts: uniformLayout(8, []int{1, 1, 1, 1, 1, 1, 1})},
	"dgxh100":            {newServer: dgxh100.New},
	"dgxh100-mig-mixed":  {newServer: dgxh100.New, layouts: mixedLayout()},
	"dgxh200":            {newServer: dgxh200.New},
	"dgxb200":            {newServer: dgxb200.New},
}

// mixedLayout has MIG on GPUs 0-5 with 1-, 2- and 3-slice instances and
// whole GPUs 6 and 7.
func mixedLayout() map[int][]int {
	shapes := [][]int{{3, 2, 1, 1}, {2, 2, 2, 1}, {3, 3}, {1, 1, 1, 1, 1, 1, 1}, {3, 2, 1, 1}, {2, 2, 2, 1}}
	out := map[int][]int{}
	for i, s := range shapes {
		out[i] = s
	}
	return out
}

func uniformLayout(n int, shape []int) map[int][]int {
	out := map[int][]int{}
	for i := 0; i < n; i++ {
		out[i] = shape
	}
	return out
}

// Profiles returns the names of the simulated machines.
func Profiles() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// giProfileBySlices maps a slice count to NVML's GPU and compute instance
// profile ids.
var giProfileBySlices = map[int][2]int{
	1: {nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE},
	2: {nvml.GPU_INSTANCE_PROFILE_2_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_2_SLICE},
	3: {nvml.GPU_INSTANCE_PROFILE_3_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE},
	4: {nvml.GPU_INSTANCE_PROFILE_4_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_4_SLICE},
	7: {nvml.GPU_INSTANCE_PROFILE_7_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_7_SLICE},
}

// New builds the named simulated machine (see Profiles). GPUs
// 0-3 sit on NUMA node 0 and 4-7 on node 1; every GPU pair is connected
// through NVSwitch.
func New(name string) (*Simulator, error) {
	p, ok := profiles[name]
	if !ok {
		return nil, fmt.Errorf("unknown simulated profile %q: must be one of %s", name, strings.Join(Profiles(), ", "))
	}
	n := 8
	nvlink := make([][]bool, n)
	for i := range nvlink {
		nvlink[i] = make([]bool, n)
		for j := range nvlink[i] {
			nvlink[i][j] = i != j
		}
	}
	numa := func(i int) int { return i / 4 }
	return newSimulator(name, p.newServer(), p.layouts, nvlink, numa)
}

// NewCustom builds a machine from a mock server, MIG layouts,
// an NVLink matrix and a NUMA mapping; tests use it for topologies the
// DGX profiles do not have. The GPUs keep the UUIDs srv gave them; MIG
// device UUIDs and serial numbers are derived from those.
func NewCustom(srv *server.Server, layouts map[int][]int, nvlink [][]bool, numa func(int) int) (*Simulator, error) {
	return newSimulator("", srv, layouts, nvlink, numa)
}

// newSimulator extends srv. With a profile name, GPU UUIDs, MIG device
// UUIDs and serial numbers are derived from the name and the GPU index
// (go-nvml's mocks draw random UUIDs), so two processes simulating one
// profile see the same devices.
func newSimulator(name string, srv *server.Server, layouts map[int][]int, nvlink [][]bool, numa func(int) int) (*Simulator, error) {
	s := &Simulator{
		Server: srv,
		sets:   map[*simEventSet]struct{}{},
		lost:   map[string]bool{},
		migs:   map[string][]*mock.Device{},
		stats:  map[string]nvidia.Stats{},
		energy: map[string]*energyMeter{},
	}
	s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return s.newEventSet(), nvml.SUCCESS }
	for i, h := range srv.Devices {
		d := h.(*server.Device)
		seed := name
		if name != "" {
			d.UUID = simGPUUUID(name, i)
		} else {
			seed = d.UUID
		}
		serial := simSerial(seed, i)
		d.GetSerialFunc = func() (string, nvml.Return) { return serial, nvml.SUCCESS }
		s.extendDevice(d, i, nvlink, numa(i))
		if shape, ok := layouts[i]; ok {
			if err := s.createMIG(d, seed, i, shape); err != nil {
				return nil, fmt.Errorf("GPU %d: %w", i, err)
			}
		}
		s.stats[d.UUID] = nvidia.Stats{
			GPUUtilization: uint32(10 * i % 100), MemoryUtilization: uint32(5 * i % 100),
			TemperatureC: 30 + uint32(i), PowerMilliwatts: 60000 + 1000*uint32(i),
			SMClockMHz: 1410, MemoryClockMHz: 1215,
		}
		s.energy[d.UUID] = &energyMeter{at: time.Now()}
	}
	return s, nil
}

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

// InjectXID delivers an XID event for the device with the given UUID or
// index ("2" for a GPU, "2:1" for a MIG device) to every event set that
// registered its GPU.
func (s *Simulator) InjectXID(id string, xid uint64) error {
	gpu, gi, ci, err := s.resolve(id)
	if err != nil {
		return err
	}
	ev := nvml.EventData{Device: gpu, EventType: nvml.EventTypeXidCriticalError, EventData: xid,
		GpuInstanceId: gi, ComputeInstanceId: ci}
	s.mu.Lock()
	defer s.mu.Unlock()
	for es := range s.sets {
		es.mu.Lock()
		_, registered := es.devices[gpu.UUID]
		es.mu.Unlock()
		if registered {
			select {
			case es.events <- ev:
			default:
				return fmt.Errorf("event queue of %s is full", id)
			}
		}
	}
	return nil
}

// Subscribers returns how many event sets registered the GPU of the
// device with the given UUID or index, i.e. how many would receive an
// InjectXID for it.
func (s *Simulator) Subscribers(id string) (int, error) {
	gpu, _, _, err := s.resolve(id)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for es := range s.sets {
		es.mu.Lock()
		if _, ok := es.devices[gpu.UUID]; ok {
			n++
		}
		es.mu.Unlock()
	}
	return n, nil
}

// SetLost makes NVML queries of a device fail (true) or work again (false),
// so recovery checks can be exercised.
func (s *Simulator) SetLost(id string, lost bool) error {
	gpu, gi, _, err := s.resolve(id)
	if err != nil {
		return err
	}
	uuid := gpu.UUID
	if gi != nvidia.AllInstances {
		uuid, _ = s.migUUID(gpu.UUID, gi)
	}
	s.mu.Lock()
	s.lost[uuid] = lost
	s.mu.Unlock()
	return nil
}

// resolve finds the GPU and instance ids of a UUID or index.
func (s *Simulator) resolve(id string) (*server.Device, uint32, uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, h := range s.Devices {
		d := h.(*server.Device)
		if id == d.UUID || id == fmt.Sprint(i) {
			return d, nvidia.AllInstances, nvidia.AllInstances, nil
		}
		for j, md := range s.migs[d.UUID] {
			uuid, _ := md.GetUUID()
			if id == uuid || id == nvidia.MIGIndex(i, j) {
				gi, _ := md.GetGpuInstanceId()
				ci, _ := md.GetComputeInstanceId()
				return d, uint32(gi), uint32(ci), nil
			}
		}
	}
	return nil, 0, 0, fmt.Errorf("no simulated device %q", id)
}

func (s *Simulator) migUUID(parent string, gi uint32) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, md := range s.migs[parent] {
		if id, _ := md.GetGpuInstanceId(); uint32(id) == gi {
			uuid, _ := md.GetUUID()
			return uuid, true
		}
	}
	return "", false
}

func (s *Simulator) isLost(uuid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost[uuid]
}

// SetStats sets the readings of a GPU by UUID. Supported is ignored (a
// simulated GPU reports every reading). The energy counter integrates the
// power draw over time; a non-zero st.EnergyMillijoules restarts it from
// that value.
func (s *Simulator) SetStats(uuid string, st nvidia.Stats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if m, ok := s.energy[uuid]; ok {
		m.millijoules = s.energyLocked(uuid, now)
		m.at = now
		if st.EnergyMillijoules != 0 {
			m.millijoules = st.EnergyMillijoules
		}
	}
	s.stats[uuid] = st
}

// energyOf returns a GPU's energy counter now.
func (s *Simulator) energyOf(uuid string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.energyLocked(uuid, time.Now())
}

// energyLocked is the counter at now: the energy up to the meter's time
// plus the current power draw since (mW × ms / 1000 = mJ).
func (s *Simulator) energyLocked(uuid string, now time.Time) uint64 {
	m, ok := s.energy[uuid]
	if !ok {
		return 0
	}
	ms := uint64(max(now.Sub(m.at), 0) / time.Millisecond)
	return m.millijoules + uint64(s.stats[uuid].PowerMilliwatts)*ms/1000
}

func (s *Simulator) statsOf(uuid string) nvidia.Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats[uuid]
}

// simEventSet is an nvml.EventSet fed by InjectXID.
type simEventSet struct {
	mock.EventSet
	mu      sync.Mutex
	devices map[string]*server.Device
	events  chan nvml.EventData
	freed   chan struct{}
}

func (s *Simulator) newEventSet() *simEventSet {
	es := &simEventSet{devices: map[string]*server.Device{}, events: make(chan nvml.EventData, 64), freed: make(chan struct{})}
	es.WaitFunc = func(timeoutMs uint32) (nvml.EventData, nvml.Return) {
		t := time.NewTimer(time.Duration(timeoutMs) * time.Millisecond)
		defer t.Stop()
		select {
		case ev := <-es.events:
			return ev, nvml.SUCCESS
		case <-t.C:
			return nvml.EventData{}, nvml.ERROR_TIMEOUT
		case <-es.freed:
			return nvml.EventData{}, nvml.ERROR_UNINITIALIZED
		}
	}
	es.FreeFunc = func() nvml.Return {
		s.mu.Lock()
		delete(s.sets, es)
		s.mu.Unlock()
		close(es.freed)
		return nvml.SUCCESS
	}
	s.mu.Lock()
	s.sets[es] = struct{}{}
	s.mu.Unlock()
	return es
}

func toInt8(s string) []int8 {
	out := make([]int8, len(s))
	for i := range s {
		out[i] = int8(s[i])
	}
	return out
}
