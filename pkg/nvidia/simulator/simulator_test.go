package simulator_test

import (
	"regexp"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/google/go-cmp/cmp"

	"github.com/accelstack/accelstack/pkg/nvidia"
	"github.com/accelstack/accelstack/pkg/nvidia/simulator"
)

// simIDs lists what identifies the devices of a simulated machine.
type simIDs struct {
	GPUs    []string
	Serials []string
	MIGs    []string
}

func simulatedIDs(t *testing.T, sim *simulator.Simulator) simIDs {
	t.Helper()
	m, err := nvidia.Discover(sim)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	var ids simIDs
	for _, g := range m.GPUs {
		ids.GPUs = append(ids.GPUs, g.UUID)
		h, ret := sim.DeviceGetHandleByUUID(g.UUID)
		if ret != nvml.SUCCESS {
			t.Fatalf("DeviceGetHandleByUUID(%s): %v", g.UUID, ret)
		}
		serial, ret := h.GetSerial()
		if ret != nvml.SUCCESS {
			t.Fatalf("GetSerial(%s): %v", g.UUID, ret)
		}
		ids.Serials = append(ids.Serials, serial)
		for _, d := range g.MIGDevices {
			ids.MIGs = append(ids.MIGs, d.UUID)
		}
	}
	return ids
}

var (
	gpuUUIDPattern = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	migUUIDPattern = regexp.MustCompile(`^MIG-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	serialPattern  = regexp.MustCompile(`^[0-9]{13}$`)
)

// TestSimulatorDeterministicIDs checks that two independent simulators of
// one profile agree on every UUID and serial (the device plugin and the
// node agent each build their own), that IDs look like NVML's and are
// unique, and that profiles differ from each other.
func TestSimulatorDeterministicIDs(t *testing.T) {
	seen := map[string]string{}
	for _, name := range simulator.Profiles() {
		t.Run(name, func(t *testing.T) {
			a, err := simulator.New(name)
			if err != nil {
				t.Fatal(err)
			}
			b, err := simulator.New(name)
			if err != nil {
				t.Fatal(err)
			}
			ida, idb := simulatedIDs(t, a), simulatedIDs(t, b)
			if diff := cmp.Diff(ida, idb); diff != "" {
				t.Fatalf("two simulators of %s disagree (-first +second):\n%s", name, diff)
			}
			check := func(kind string, ids []string, re *regexp.Regexp) {
				for _, id := range ids {
					if !re.MatchString(id) {
						t.Errorf("%s %q does not look like NVML's", kind, id)
					}
					if other, dup := seen[id]; dup && kind != "serial" {
						t.Errorf("%s %q of %s also in %s", kind, id, name, other)
					}
					seen[id] = name
				}
			}
			check("GPU UUID", ida.GPUs, gpuUUIDPattern)
			check("MIG UUID", ida.MIGs, migUUIDPattern)
			check("serial", ida.Serials, serialPattern)
			if len(ida.GPUs) != 8 {
				t.Errorf("got %d GPUs, want 8", len(ida.GPUs))
			}
		})
	}
}

// TestCustomSimulatorKeepsMockUUIDs checks that a custom machine keeps
// the UUIDs of the mock server it was given (tests build those), with
// MIG UUIDs derived from them.
func TestCustomSimulatorKeepsMockUUIDs(t *testing.T) {
	build := func() (*simulator.Simulator, []string) {
		srv := dgxa100.New()
		var want []string
		for _, d := range srv.Devices {
			u, _ := d.GetUUID()
			want = append(want, u)
		}
		numa := func(int) int { return 0 }
		sim, err := simulator.NewCustom(srv, map[int][]int{0: {3, 3}}, nil, numa)
		if err != nil {
			t.Fatal(err)
		}
		return sim, want
	}
	sim, want := build()
	ids := simulatedIDs(t, sim)
	if diff := cmp.Diff(want, ids.GPUs); diff != "" {
		t.Errorf("GPU UUIDs changed (-mock +simulator):\n%s", diff)
	}
	if len(ids.MIGs) != 2 {
		t.Fatalf("got MIG devices %v, want 2", ids.MIGs)
	}
	for _, u := range ids.MIGs {
		if !migUUIDPattern.MatchString(u) {
			t.Errorf("MIG UUID %q does not look like NVML's", u)
		}
	}
	other, _ := build()
	if o := simulatedIDs(t, other); o.MIGs[0] == ids.MIGs[0] {
		t.Errorf("two mock servers with different GPU UUIDs gave one MIG UUID %s", o.MIGs[0])
	}
}

// TestRunCommand checks the control socket's commands: XID injection,
// lost devices and utilization by index or UUID, and the errors for
// anything else.
func TestRunCommand(t *testing.T) {
	sim, err := simulator.New("dgxa100")
	if err != nil {
		t.Fatal(err)
	}
	testCases := []struct {
		line    string
		wantErr bool
	}{
		{"xid 0 79", false},
		{"lost 1 true", false},
		{"lost 1 false", false},
		{"xid nope 79", true},
		{"xid 0 x", true},
		{"lost 0 maybe", true},
		{"util 0 90", false},
		{"util 3 0", false},
		{"util 0 101", true},
		{"util 0 -1", true},
		{"util 0 half", true},
		{"util 9 10", true},
		{"reset 0 1", true},
		{"xid 0", true},
	}
	for _, tc := range testCases {
		t.Run(tc.line, func(t *testing.T) {
			if err := sim.RunCommand(tc.line); (err != nil) != tc.wantErr {
				t.Errorf("RunCommand(%q) = %v, wantErr %v", tc.line, err, tc.wantErr)
			}
		})
	}
}

// TestUtilCommand checks that util sets the utilization NVML reads of the
// GPU named by index or UUID, and nothing else: its other readings and the
// other GPUs keep theirs. A MIG device, which has no utilization reading,
// is refused.
func TestUtilCommand(t *testing.T) {
	sim, err := simulator.New("dgxa100-mig-mixed")
	if err != nil {
		t.Fatal(err)
	}
	read := func(i int) (nvml.Utilization, uint32) {
		t.Helper()
		d, ret := sim.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			t.Fatalf("GPU %d: %v", i, ret)
		}
		u, ret := d.GetUtilizationRates()
		if ret != nvml.SUCCESS {
			t.Fatalf("GPU %d utilization: %v", i, ret)
		}
		temp, ret := d.GetTemperature(nvml.TEMPERATURE_GPU)
		if ret != nvml.SUCCESS {
			t.Fatalf("GPU %d temperature: %v", i, ret)
		}
		return u, temp
	}
	before7, temp7 := read(7)
	before6, _ := read(6)
	if err := sim.RunCommand("util 7 93"); err != nil {
		t.Fatal(err)
	}
	if u, temp := read(7); u.Gpu != 93 || u.Memory != before7.Memory || temp != temp7 {
		t.Errorf("GPU 7 after util 93: utilization %+v temperature %d, want gpu 93, memory %d, temperature %d", u, temp, before7.Memory, temp7)
	}
	if u, _ := read(6); u != before6 {
		t.Errorf("GPU 6 changed with GPU 7: %+v, was %+v", u, before6)
	}
	d, _ := sim.DeviceGetHandleByIndex(6)
	uuid, _ := d.GetUUID()
	if err := sim.RunCommand("util " + uuid + " 0"); err != nil {
		t.Fatal(err)
	}
	if u, _ := read(6); u.Gpu != 0 {
		t.Errorf("GPU 6 after util 0 by UUID: %+v", u)
	}
	if err := sim.RunCommand("util " + nvidia.MIGIndex(0, 0) + " 50"); err == nil {
		t.Error("util on a MIG device: no error")
	}
}
