// Package netlimit bounds the connections a server holds open at once, so
// that clients cannot exhaust its memory or file descriptors by opening
// more: the servers in front of tenants' traffic (the serving router, the
// activity sidecar) accept through it. It imports only the standard
// library.
package netlimit

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
)

// Listener accepts at most a fixed number of connections open at once:
// Accept waits for one to close before it takes the next from the kernel,
// where the others wait in the listen backlog. Requests on the open
// connections go on being served.
type Listener struct {
	net.Listener
	slots chan struct{}
	// waiting counts the Accept calls waiting for a slot.
	waiting atomic.Int32
	done    chan struct{}
	close   sync.Once
}

// Limit returns ln accepting at most n connections at once; ln itself when
// n is 0 or less.
func Limit(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		return ln
	}
	return NewListener(ln, n)
}

// NewListener returns ln accepting at most n (at least 1) connections at
// once.
func NewListener(ln net.Listener, n int) *Listener {
	return &Listener{Listener: ln, slots: make(chan struct{}, max(n, 1)), done: make(chan struct{})}
}

// Accept waits for a free slot, then accepts a connection that frees its
// slot when it is closed.
func (l *Listener) Accept() (net.Conn, error) {
	l.waiting.Add(1)
	select {
	case l.slots <- struct{}{}:
		l.waiting.Add(-1)
	case <-l.done:
		l.waiting.Add(-1)
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &conn{Conn: c, free: func() { <-l.slots }}, nil
}

// Waiting returns the number of Accept calls waiting for a slot.
func (l *Listener) Waiting() int { return int(l.waiting.Load()) }

// Close closes the listener and ends the Accepts waiting for a slot.
func (l *Listener) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// conn frees its slot once, when it is first closed.
type conn struct {
	net.Conn
	once sync.Once
	free func()
}

// Close closes the connection and frees its slot.
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}

// CloseWrite half-closes the connection where the connection beneath can
// (a TCP connection), which proxied upgrades use; errors.ErrUnsupported
// otherwise.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}
