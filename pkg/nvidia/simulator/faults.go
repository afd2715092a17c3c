package simulator

import (
	"fmt"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/accelstack/accelstack/pkg/nvidia"
)

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
