package ascend

/*
#include <errno.h>
#include <unistd.h>

// The filter of dcmi_subscribe_fault_event; all zero subscribes to every event.
struct as_event_filter {
	unsigned long long filter_flag;
	unsigned int event_id;
	unsigned char severity;
	unsigned char node_type;
};

// DCMI calls as_on_fault on its own thread. It only writes a byte to a
// pipe the Go side reads, which is safe from any thread; a full pipe
// already holds a wake-up, so EAGAIN is fine.
static int as_event_fd = -1;

static void as_on_fault(void *event) {
	char b = 1;
	int saved = errno;
	(void)event;
	if (as_event_fd >= 0)
		(void)write(as_event_fd, &b, 1);
	errno = saved;
}

static int as_subscribe(void *f, int fd) {
	struct as_event_filter filter = {0, 0, 0, 0};
	as_event_fd = fd;
	// card -1, device -1: every chip of the node.
	return ((int (*)(int, int, struct as_event_filter, void (*)(void *)))f)(-1, -1, filter, as_on_fault);
}

static void as_unsubscribe(void) { as_event_fd = -1; }
*/
import "C"

import "os"

// fnSubscribe is DCMI's fault-event subscription, resolved like the others.
const fnSubscribe = "dcmi_subscribe_fault_event"

// eventPipe carries DCMI's fault callbacks into Go.
type eventPipe struct {
	r, w *os.File
	ch   chan struct{}
}

var _ FaultEventer = (*dcmiLib)(nil)

// FaultEvents subscribes, once, to DCMI's fault events on every chip and
// returns a channel that signals (coalesced) each fault or recovery, so
// health is read at once rather than at the next poll. It returns nil, and
// health stays polled, when the library lacks the call or refuses it.
func (l *dcmiLib) FaultEvents() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.events != nil {
		return l.events.ch
	}
	p, err := l.sym(fnSubscribe)
	if err != nil {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	if rc := C.as_subscribe(p, C.int(w.Fd())); rc != 0 {
		C.as_unsubscribe()
		r.Close()
		w.Close()
		return nil
	}
	ev := &eventPipe{r: r, w: w, ch: make(chan struct{}, 1)}
	go ev.forward()
	l.events = ev
	return ev.ch
}

// forward turns bytes from the callback into channel signals until the
// pipe is closed.
func (e *eventPipe) forward() {
	buf := make([]byte, 64)
	for {
		if _, err := e.r.Read(buf); err != nil {
			return
		}
		select {
		case e.ch <- struct{}{}:
		default:
		}
	}
}

// stopEvents detaches the callback from the pipe and closes it; DCMI has no
// unsubscribe call. The caller holds l.mu.
func (l *dcmiLib) stopEvents() {
	if l.events == nil {
		return
	}
	C.as_unsubscribe()
	l.events.w.Close()
	l.events.r.Close()
	l.events = nil
}
