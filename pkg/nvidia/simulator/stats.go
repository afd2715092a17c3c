package simulator

import (
	"fmt"
	"time"

	"github.com/accelstack/accelstack/pkg/nvidia"
)

// energyMeter is a simulated energy counter: the energy counted up to at,
// plus the power draw since.
type energyMeter struct {
	millijoules uint64
	at          time.Time
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

// SetUtilization sets the GPU utilization reading (percent) of a whole
// GPU, by UUID or index, keeping its other readings. MIG devices have no
// utilization reading (as with NVML), so naming one is an error.
func (s *Simulator) SetUtilization(id string, pct uint32) error {
	gpu, gi, _, err := s.resolve(id)
	if err != nil {
		return err
	}
	if gi != nvidia.AllInstances {
		return fmt.Errorf("%s is a MIG device, which has no utilization reading", id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats[gpu.UUID]
	st.GPUUtilization = pct
	s.stats[gpu.UUID] = st
	return nil
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
