package router

import "time"

// Options tunes the router.
type Options struct {
	// QueueSize bounds the events waiting for each logger URL.
	QueueSize int
	// Workers send the events of each logger URL at once.
	Workers int
	// SendTimeout bounds one delivery of an event.
	SendTimeout time.Duration
	// MaxLoggedBody is the largest request or response body the events
	// carry; a larger body is proxied whole and its event carries none.
	MaxLoggedBody int
	// MaxQueuedBytes bounds the bodies of the events waiting for each
	// logger URL; an event that would exceed it is dropped.
	MaxQueuedBytes int
	// MaxLoggedBytesInFlight bounds the request and response bodies held
	// for events by all requests being served at once; a body that does
	// not fit is proxied as it is and its event carries none.
	MaxLoggedBytesInFlight int64

	// ReadHeaderTimeout bounds the reading of a request's head,
	// ReadTimeout of the whole request with its body, IdleTimeout the wait
	// for the next request on a kept connection; 0 for none.
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// MaxConns bounds the client connections open at once; more wait to
	// be accepted. 0 for no bound.
	MaxConns int
}

// DefaultOptions are the options of cmd/serving-router.
func DefaultOptions() Options {
	return Options{
		QueueSize: 1024, Workers: 4, SendTimeout: 5 * time.Second, MaxLoggedBody: 4 << 20, MaxQueuedBytes: 64 << 20,
		MaxLoggedBytesInFlight: DefaultMaxLoggedBytesInFlight,
		ReadHeaderTimeout:      10 * time.Second, ReadTimeout: DefaultReadTimeout, IdleTimeout: DefaultIdleTimeout,
		MaxConns: DefaultMaxConns,
	}
}

// Defaults of the server's bounds.
const (
	// DefaultReadTimeout lets a client send a request of the largest body
	// logged (4 MiB) at under 100 KB/s and still bounds how long a client
	// that trickles its body holds a connection.
	DefaultReadTimeout = 60 * time.Second
	// DefaultIdleTimeout closes kept connections idle as long as the
	// router's own to the predictors (90 s).
	DefaultIdleTimeout = 90 * time.Second
	// DefaultMaxConns bounds the connections at 4096: a connection in the
	// middle of a request holds about 20 KiB of heap (buffers, request,
	// the first 4 KiB of its body; TestSlowBodies measures it) and a
	// goroutine of 8 KiB or more, so some 120 MiB at most, and no client
	// fills the pod's file descriptors; far more than the clients of one
	// MLService keep open.
	DefaultMaxConns = 4096
	// DefaultMaxLoggedBytesInFlight holds the bodies of 16 requests of the
	// largest body logged at once, as much as one logger URL's queue.
	DefaultMaxLoggedBytesInFlight = 64 << 20
)
