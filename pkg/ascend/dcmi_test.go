package ascend

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// openFakeDCMI builds the fake library with state, opens and initialises it
// through the binding, and shuts it down when the test ends.
func openFakeDCMI(t *testing.T, state string, defines ...string) (lib Lib, stateFile string) {
	t.Helper()
	path, stateFile := buildFakeDCMI(t, state, defines...)
	lib, err := OpenDCMI(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lib.Shutdown() })
	if err := lib.Init(); err != nil {
		t.Fatal(err)
	}
	return lib, stateFile
}

// buildFakeDCMI compiles testdata/fakedcmi.c into a shared library with the
// machine's gcc and points it at a fresh state file holding state.
func buildFakeDCMI(t *testing.T, state string, defines ...string) (lib, stateFile string) {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatal("gcc not found; the DCMI binding test compiles its fake library with it")
	}
	dir := t.TempDir()
	lib = filepath.Join(dir, "libdcmi.so")
	args := append([]string{"-shared", "-fPIC", "-pthread", "-Wall", "-Werror", "-o", lib, "testdata/fakedcmi.c"}, defines...)
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	stateFile = filepath.Join(dir, "state")
	writeState(t, stateFile, state)
	t.Setenv("FAKE_DCMI_STATE", stateFile)
	return lib, stateFile
}

func writeState(t *testing.T, path, state string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A dual-chip card whose physical IDs differ from the logical ones, and a
// third chip with a fault and two error codes.
const fakeState = `init 0
chip 0 0 0 1 Ascend 910B 20 0 0 10.0.0.11 37 51 955 65536 2048 0
chip 0 1 1 0 Ascend 910B 20 0 0 10.0.0.10 0 48 901 65536 0 0
chip 4 0 2 2 Ascend 910B 20 2 5 10.0.0.12 0 70 1200 65536 100 2 2350 80818692
`

func TestDCMIBinding(t *testing.T) {
	path, _ := buildFakeDCMI(t, fakeState)
	lib, err := OpenDCMI(path)
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Shutdown()
	if err := lib.Init(); err != nil {
		t.Fatalf("Init: %v", err)
	}
	chips, err := Discover(lib)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	info := ChipInfo{Type: "Ascend", Name: "910B", Version: "V1", AICores: 20}
	want := []Chip{
		{Card: 0, Device: 1, LogicID: 1, PhyID: 0, Info: info, IP: "10.0.0.10"},
		{Card: 0, Device: 0, LogicID: 0, PhyID: 1, Info: info, IP: "10.0.0.11"},
		{Card: 4, Device: 0, LogicID: 2, PhyID: 2, Info: info, IP: "10.0.0.12"},
	}
	if diff := cmp.Diff(want, chips); diff != "" {
		t.Errorf("Discover (-want +got):\n%s", diff)
	}

	type reading struct {
		Health, Network, Util uint32
		Codes                 []uint32
		Temp                  int
		Power                 float64
		HBM                   Memory
	}
	read := func(card, dev int) reading {
		var r reading
		var errs []error
		var e error
		r.Health, e = lib.Health(card, dev)
		errs = append(errs, e)
		r.Network, e = lib.NetworkHealth(card, dev)
		errs = append(errs, e)
		r.Util, e = lib.Utilization(card, dev)
		errs = append(errs, e)
		r.Codes, e = lib.ErrorCodes(card, dev)
		errs = append(errs, e)
		r.Temp, e = lib.Temperature(card, dev)
		errs = append(errs, e)
		r.Power, e = lib.Power(card, dev)
		errs = append(errs, e)
		r.HBM, e = lib.HBM(card, dev)
		errs = append(errs, e)
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("reading card %d chip %d: %v", card, dev, err)
		}
		return r
	}
	tests := []struct {
		name      string
		card, dev int
		want      reading
	}{
		{"healthy busy chip", 0, 0, reading{Util: 37, Codes: []uint32{}, Temp: 51, Power: 95.5, HBM: Memory{TotalBytes: 65536 * mib, UsedBytes: 2048 * mib}}},
		{"faulty chip", 4, 0, reading{Health: HealthMajor, Network: NetworkDown, Codes: []uint32{2350, 80818692}, Temp: 70, Power: 120, HBM: Memory{TotalBytes: 65536 * mib, UsedBytes: 100 * mib}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, read(tc.card, tc.dev)); diff != "" {
				t.Errorf("readings (-want +got):\n%s", diff)
			}
		})
	}
	mem, err := lib.Memory(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Memory{TotalBytes: 32768 * mib, UsedBytes: 2048 * mib}, mem); diff != "" {
		t.Errorf("Memory (-want +got):\n%s", diff)
	}
	var rerr *ReturnError
	if _, err := lib.Health(9, 0); !errors.As(err, &rerr) || rerr.Code != -8001 {
		t.Errorf("Health of a missing chip: got %v, want a ReturnError with code -8001", err)
	}
}

func TestDCMIStateChangesAreSeen(t *testing.T) {
	lib, state := openFakeDCMI(t, fakeState)
	if h, err := lib.Health(0, 0); err != nil || h != HealthOK {
		t.Fatalf("Health = %d, %v; want 0", h, err)
	}
	writeState(t, state, strings.Replace(fakeState, "chip 0 0 0 1 Ascend 910B 20 0 0", "chip 0 0 0 1 Ascend 910B 20 3 0", 1))
	if h, err := lib.Health(0, 0); err != nil || h != HealthCritical {
		t.Fatalf("Health after fault = %d, %v; want %d", h, err, HealthCritical)
	}
}

func TestDCMIMissingSymbol(t *testing.T) {
	path, _ := buildFakeDCMI(t, fakeState, "-DOMIT_NETWORK_HEALTH")
	lib, err := OpenDCMI(path)
	if err != nil {
		t.Fatalf("a library lacking one function must still load: %v", err)
	}
	defer lib.Shutdown()
	if err := lib.Init(); err != nil {
		t.Fatal(err)
	}
	if _, err := lib.NetworkHealth(0, 0); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "dcmi_get_device_network_health") {
		t.Errorf("NetworkHealth: got %v, want ErrNotSupported naming the function", err)
	}
	if h, err := lib.Health(0, 0); err != nil || h != HealthOK {
		t.Errorf("Health next to a missing function: %d, %v", h, err)
	}
}

func TestDCMIInitFailure(t *testing.T) {
	path, _ := buildFakeDCMI(t, strings.Replace(fakeState, "init 0", "init -8020", 1))
	lib, err := OpenDCMI(path)
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Shutdown()
	var rerr *ReturnError
	if err := lib.Init(); !errors.As(err, &rerr) || rerr.Func != "dcmi_init" || rerr.Code != -8020 {
		t.Errorf("Init: got %v, want dcmi_init returned -8020", err)
	}
}

func TestDCMINoLibrary(t *testing.T) {
	_, err := OpenDCMI(filepath.Join(t.TempDir(), "libdcmi.so"))
	if err == nil || !strings.Contains(err.Error(), "loading DCMI library") {
		t.Errorf("OpenDCMI of a missing file: got %v, want a loading error", err)
	}
}

func TestDCMIAfterShutdown(t *testing.T) {
	path, _ := buildFakeDCMI(t, fakeState)
	lib, err := OpenDCMI(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := lib.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Health(0, 0); err == nil || !strings.Contains(err.Error(), "shut down") {
		t.Errorf("Health after Shutdown: got %v", err)
	}
}

// TestDCMIFaultEvents checks that a fault reported through
// dcmi_subscribe_fault_event is signalled at once on FaultEvents, and that
// the chip then reads unhealthy.
func TestDCMIFaultEvents(t *testing.T) {
	lib, state := openFakeDCMI(t, fakeState)
	chips, err := Discover(lib)
	if err != nil {
		t.Fatal(err)
	}
	events := lib.(FaultEventer).FaultEvents()
	if events == nil {
		t.Fatal("FaultEvents = nil, want a subscription")
	}
	chip := chips[1] // physical ID 1
	if !ReadHealth(lib, chip).Healthy {
		t.Fatal("chip 1 unhealthy before the fault")
	}

	writeState(t, state, strings.Replace(fakeState, "chip 0 0 0 1 Ascend 910B 20 0 0", "chip 0 0 0 1 Ascend 910B 20 3 0", 1))
	select {
	case <-events:
	case <-time.After(30 * time.Second): // a bound against hanging, not a latency check
		t.Fatal("the fault event never came")
	}
	if h := ReadHealth(lib, chip); h.Healthy || h.Health != HealthCritical {
		t.Errorf("chip 1 after the fault event = %+v, want unhealthy with health %d", h, HealthCritical)
	}
}

// TestDCMIWithoutFaultEvents checks that a library lacking the
// subscription leaves health to polling instead of failing.
func TestDCMIWithoutFaultEvents(t *testing.T) {
	lib, _ := openFakeDCMI(t, fakeState, "-DOMIT_FAULT_EVENTS")
	if ch := lib.(FaultEventer).FaultEvents(); ch != nil {
		t.Fatal("FaultEvents without dcmi_subscribe_fault_event != nil")
	}
}
