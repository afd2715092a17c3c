package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// Forwarder forwards TCP connections to an SSH server, counting the open
// sessions and the client's data in a Recorder.
type Forwarder struct {
	rec         *Recorder
	upstream    string
	dialTimeout time.Duration
	// slots holds a token per open session; a connection beyond its
	// capacity is closed at once.
	slots chan struct{}

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewForwarder returns a forwarder to upstream (host:port) of at most
// maxSessions sessions at once, recording in rec.
func NewForwarder(rec *Recorder, upstream string, maxSessions int, dialTimeout time.Duration) *Forwarder {
	return &Forwarder{
		rec: rec, upstream: upstream, dialTimeout: dialTimeout,
		slots: make(chan struct{}, maxSessions),
		conns: map[net.Conn]struct{}{},
	}
}

// Serve forwards the connections ln accepts until ctx ends, then closes
// the sessions and returns once they are gone.
func (f *Forwarder) Serve(ctx context.Context, ln net.Listener) error {
	log := klog.FromContext(ctx)
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	var err error
	for {
		var c net.Conn
		if c, err = ln.Accept(); err != nil {
			break
		}
		select {
		case f.slots <- struct{}{}:
		default:
			log.Info("Refusing an SSH connection: too many sessions", "client", c.RemoteAddr().String(), "max", cap(f.slots))
			_ = c.Close()
			continue
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer func() { <-f.slots }()
			f.forward(ctx, c)
		}()
	}
	_ = ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		_ = c.Close()
	}
	f.conns = nil // sessions connecting now are closed by track
	f.mu.Unlock()
	f.wg.Wait()
	if ctx.Err() != nil && errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// forward connects client to the upstream and copies both ways until both
// sides are done, half-closing each side when the other stops sending.
func (f *Forwarder) forward(ctx context.Context, client net.Conn) {
	log := klog.FromContext(ctx)
	defer client.Close()
	d := net.Dialer{Timeout: f.dialTimeout}
	up, err := d.DialContext(ctx, "tcp", f.upstream)
	if err != nil {
		log.V(2).Info("SSH server not reachable", "upstream", f.upstream, "err", err)
		return
	}
	defer up.Close()
	if !f.track(client, up) {
		return
	}
	defer f.untrack(client, up)
	f.rec.SSHOpened()
	defer f.rec.SSHClosed()

	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(up, &dataReader{r: client, onData: f.rec.SSHData})
		if closeWrite(up) != nil {
			_ = up.Close()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(client, up)
		if closeWrite(client) != nil {
			_ = client.Close()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}

// track adds conns to the open ones, unless Serve is closing them.
func (f *Forwarder) track(conns ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		return false
	}
	for _, c := range conns {
		f.conns[c] = struct{}{}
	}
	return true
}

// untrack removes conns from the open ones.
func (f *Forwarder) untrack(conns ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range conns {
		delete(f.conns, c)
	}
}

// dataReader reads from r, calling onData after each read of data.
type dataReader struct {
	r      io.Reader
	onData func()
}

func (d *dataReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if n > 0 {
		d.onData()
	}
	return n, err
}
