package nodeagent

import (
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/nvidia"
)

// xidKey names where an XID happened: a GPU, or one GPU instance on it
// (instance -1 for the whole GPU).
type xidKey struct {
	uuid     string
	instance int
}

// xidEvent is the last XID at a place.
type xidEvent struct {
	xid uint64
	at  time.Time
}

// xidWatcher records XID events from an NVML event set.
type xidWatcher struct {
	es   nvml.EventSet
	wait time.Duration
	log  klog.Logger

	mu sync.Mutex
	// fresh is the latest event of each key since the last drain, and
	// pending those events in order, for the health state. A drain moves
	// fresh into last, so that a collection's XID readings and the health
	// it derives come from the same events.
	fresh   map[xidKey]xidEvent
	pending []nvidia.XIDEvent
	// last is the latest event of each key, as of the last drain.
	last map[xidKey]xidEvent

	stop chan struct{}
	done chan struct{}
}

// startXIDWatcher registers every GPU for XID events and starts waiting.
func startXIDWatcher(lib nvml.Interface, log klog.Logger) (*xidWatcher, error) {
	es, ret := lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		return nil, ret
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		es.Free()
		return nil, ret
	}
	for i := 0; i < n; i++ {
		h, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		if ret := h.RegisterEvents(nvml.EventTypeXidCriticalError, es); ret != nvml.SUCCESS {
			log.Info("GPU does not report XID events", "gpu", i, "err", ret.Error())
		}
	}
	w := &xidWatcher{es: es, wait: 200 * time.Millisecond, log: log,
		fresh: map[xidKey]xidEvent{}, last: map[xidKey]xidEvent{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w, nil
}

func (w *xidWatcher) loop() {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		ev, ret := w.es.Wait(uint32(w.wait / time.Millisecond))
		switch ret {
		case nvml.SUCCESS:
		case nvml.ERROR_TIMEOUT:
			continue
		case nvml.ERROR_UNINITIALIZED:
			return
		default:
			select {
			case <-w.stop:
				return
			case <-time.After(w.wait):
			}
			continue
		}
		x, ok := nvidia.XIDEventFromNVML(ev, time.Now())
		if !ok || x.GPU == "" {
			continue
		}
		w.record(x)
	}
}

// record keeps an event until the next drain.
func (w *xidWatcher) record(x nvidia.XIDEvent) {
	k := xidKey{uuid: x.GPU, instance: -1}
	if x.GPUInstance != nvidia.AllInstances {
		k.instance = int(x.GPUInstance)
	}
	w.log.Info("XID event", "uuid", x.GPU, "gpuInstance", k.instance, "xid", x.XID)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fresh[k] = xidEvent{xid: x.XID, at: x.Time}
	if len(w.pending) < maxPendingXIDs {
		w.pending = append(w.pending, x)
	}
}

// maxPendingXIDs bounds the events kept between two collections; an XID
// storm beyond it changes nothing (the devices are unhealthy already).
const maxPendingXIDs = 1024

// drain returns the events seen since the last drain, and makes them
// what lastFor answers.
func (w *xidWatcher) drain() []nvidia.XIDEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, ev := range w.fresh {
		w.last[k] = ev
	}
	clear(w.fresh)
	out := w.pending
	w.pending = nil
	return out
}

// lastFor returns the latest XID, as of the last drain, on a GPU (instance
// -1: anywhere on it) or on one of its GPU instances (including whole-GPU
// events).
func (w *xidWatcher) lastFor(uuid string, instance int) (xidEvent, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var best xidEvent
	found := false
	for k, ev := range w.last {
		if k.uuid != uuid || (instance >= 0 && k.instance != -1 && k.instance != instance) {
			continue
		}
		if !found || ev.at.After(best.at) {
			best, found = ev, true
		}
	}
	return best, found
}

// close stops waiting and frees the event set.
func (w *xidWatcher) close() {
	close(w.stop)
	<-w.done
	w.es.Free()
}
