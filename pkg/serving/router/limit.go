package router

import (
	"net"
	"sync"
	"sync/atomic"
)

// limitListener accepts at most max connections open at once: Accept
// waits for one to close before it takes the next from the kernel, where
// the others wait in the listen backlog. Requests on the open connections
// go on being served.
type limitListener struct {
	net.Listener
	slots chan struct{}
	// waiting counts the Accept calls waiting for a slot.
	waiting atomic.Int32
	done    chan struct{}
	close   sync.Once
}

// newLimitListener returns l accepting at most max connections at once;
// l itself when max is 0 or less.
func newLimitListener(l net.Listener, max int) net.Listener {
	if max <= 0 {
		return l
	}
	return &limitListener{Listener: l, slots: make(chan struct{}, max), done: make(chan struct{})}
}

// Accept waits for a free slot, then accepts a connection that frees its
// slot when it is closed.
func (l *limitListener) Accept() (net.Conn, error) {
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
	return &limitedConn{Conn: c, free: func() { <-l.slots }}, nil
}

// Close closes the listener and ends the Accepts waiting for a slot.
func (l *limitListener) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn frees its slot once, when it is first closed.
type limitedConn struct {
	net.Conn
	once sync.Once
	free func()
}

// Close closes the connection and frees its slot.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.free)
	return err
}
