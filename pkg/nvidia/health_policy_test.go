package nvidia_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/accelstack/accelstack/pkg/nvidia"
	"github.com/accelstack/accelstack/pkg/nvidia/simulator"
)

// TestAffectedDevices maps XID events on a MIG-mixed machine to the
// devices they concern.
func TestAffectedDevices(t *testing.T) {
	sim, err := simulator.New("dgxa100-mig-mixed")
	if err != nil {
		t.Fatal(err)
	}
	m, err := nvidia.Discover(sim)
	if err != nil {
		t.Fatal(err)
	}
	g0, g7 := m.GPUs[0], m.GPUs[7]
	mig := g0.MIGDevices[1]
	all0 := []string{g0.UUID}
	for _, d := range g0.MIGDevices {
		all0 = append(all0, d.UUID)
	}
	testCases := []struct {
		name string
		ev   nvidia.XIDEvent
		want []string
	}{
		{name: "whole MIG GPU", ev: nvidia.XIDEvent{GPU: g0.UUID, GPUInstance: nvidia.AllInstances, ComputeInstance: nvidia.AllInstances}, want: all0},
		{name: "one GPU instance", ev: nvidia.XIDEvent{GPU: g0.UUID, GPUInstance: uint32(mig.MIG.GPUInstance), ComputeInstance: nvidia.AllInstances}, want: []string{mig.UUID}},
		{name: "GPU and compute instance", ev: nvidia.XIDEvent{GPU: g0.UUID, GPUInstance: uint32(mig.MIG.GPUInstance), ComputeInstance: uint32(mig.MIG.ComputeInstance)}, want: []string{mig.UUID}},
		{name: "GPU without MIG", ev: nvidia.XIDEvent{GPU: g7.UUID, GPUInstance: nvidia.AllInstances, ComputeInstance: nvidia.AllInstances}, want: []string{g7.UUID}},
		{name: "unknown GPU", ev: nvidia.XIDEvent{GPU: "GPU-x", GPUInstance: nvidia.AllInstances}, want: nil},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, nvidia.AffectedDevices(m, tc.ev)); diff != "" {
				t.Errorf("AffectedDevices (-want +got):\n%s", diff)
			}
		})
	}
	if n := len(nvidia.AffectedDevices(m, nvidia.XIDEvent{GPUInstance: nvidia.AllInstances})); n < len(m.GPUs) {
		t.Errorf("an event without a GPU concerns %d devices, want every GPU", n)
	}
}

// TestHealthState walks one device through the shared health rule.
func TestHealthState(t *testing.T) {
	sim, err := simulator.New("dgxa100")
	if err != nil {
		t.Fatal(err)
	}
	m, err := nvidia.Discover(sim)
	if err != nil {
		t.Fatal(err)
	}
	u := m.GPUs[2].UUID
	ev := func(xid uint64, at time.Time) nvidia.XIDEvent {
		return nvidia.XIDEvent{GPU: u, GPUInstance: nvidia.AllInstances, ComputeInstance: nvidia.AllInstances, XID: xid, Time: at}
	}
	t0 := time.Unix(1000, 0)
	quiet := time.Minute
	h := nvidia.NewHealthState(nvidia.NewHealthPolicy("", "", quiet))
	if _, critical := h.Record(m, ev(13, t0)); critical || !h.Healthy(u) {
		t.Fatal("application XID 13 made the device unhealthy")
	}
	if got, critical := h.Record(m, ev(79, t0)); !critical || !cmp.Equal(got, []string{u}) || h.Healthy(u) {
		t.Fatalf("XID 79: got %v, critical %v, healthy %v", got, critical, h.Healthy(u))
	}
	// An ignored XID later does not heal it, nor restart its quiet period.
	h.Record(m, ev(13, t0.Add(50*time.Second)))
	if h.Healthy(u) {
		t.Fatal("a later XID 13 healed the device")
	}
	pass := func(string) error { return nil }
	if got := h.Recover(t0.Add(quiet-time.Second), pass); len(got) != 0 {
		t.Fatalf("healed %v before the quiet period", got)
	}
	if got := h.Recover(t0.Add(quiet), func(string) error { return errors.New("GPU is lost") }); len(got) != 0 || h.Healthy(u) {
		t.Fatalf("healed %v although the check failed", got)
	}
	if got := h.Recover(t0.Add(quiet), func(uuid string) error { return nvidia.CheckDevice(sim, m, uuid) }); !cmp.Equal(got, []string{u}) || !h.Healthy(u) {
		t.Fatalf("Recover after the quiet period with a passing check = %v, want [%s]", got, u)
	}

	never := nvidia.NewHealthState(nvidia.NewHealthPolicy("", "", 0))
	never.Record(m, ev(79, t0))
	if got := never.Recover(t0.Add(24*time.Hour), pass); len(got) != 0 {
		t.Errorf("quiet period 0 healed %v", got)
	}
	off := nvidia.NewHealthState(nvidia.NewHealthPolicy("all", "", quiet))
	if _, critical := off.Record(m, ev(79, t0)); critical || !off.Healthy(u) {
		t.Error("DP_DISABLE_HEALTHCHECKS=all still acted on XID 79")
	}
	t.Setenv(nvidia.EnvEnableHealthChecks, "13")
	if !nvidia.HealthPolicyFromEnv(quiet).Critical(13) {
		t.Error("DP_ENABLE_HEALTHCHECKS=13 from the environment did not make XID 13 critical")
	}
	if err := sim.SetLost("2", true); err != nil {
		t.Fatal(err)
	}
	if err := nvidia.CheckDevice(sim, m, u); err == nil {
		t.Error("CheckDevice passed a lost GPU")
	}
}

func TestHealthPolicy(t *testing.T) {
	testCases := []struct {
		name            string
		disable, enable string
		xid             uint64
		want            bool
	}{
		{name: "default critical", xid: 79, want: true},
		{name: "default ignored", xid: 13, want: false},
		{name: "default ignored 109", xid: 109, want: false},
		{name: "disable all", disable: "all", xid: 79, want: false},
		{name: "disable xids", disable: "xids", xid: 48, want: false},
		{name: "disable list", disable: "79, 48", xid: 79, want: false},
		{name: "disable list leaves others", disable: "79", xid: 48, want: true},
		{name: "enable wins", disable: "79", enable: "79", xid: 79, want: true},
		{name: "enable default-ignored", enable: "13", xid: 13, want: true},
		{name: "enable all", enable: "all", xid: 31, want: true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := nvidia.NewHealthPolicy(tc.disable, tc.enable, 0).Critical(tc.xid); got != tc.want {
				t.Errorf("critical(%d) = %v, want %v", tc.xid, got, tc.want)
			}
		})
	}
}
