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
