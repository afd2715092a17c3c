package router

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// newTransport returns the transport of the router's reverse proxies,
// shared by all targets, and the dialer of their connection pools. It
// keeps up to 256 idle connections per release, enough for the clients of
// a busy model server. It never asks for compression: the client's own
// Accept-Encoding reaches the model server unchanged, so the router
// neither asks for a gzipped response its client did not want nor spends
// its CPU inflating one. Releases are http://, so HTTP/2 is never
// attempted.
func newTransport() (*http.Transport, func(ctx context.Context, network, addr string) (net.Conn, error)) {
	d := &spreadDialer{dialer: net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}, lookup: net.DefaultResolver.LookupHost}
	return &http.Transport{
		Proxy: nil, DialContext: d.DialContext,
		MaxIdleConns: 1024, MaxIdleConnsPerHost: maxIdleUpstream, IdleConnTimeout: 90 * time.Second,
		DisableCompression: true, ForceAttemptHTTP2: false,
	}, d.DialContext
}

// maxBufferedBody is the largest request body the router reads whole
// before the request goes out (see connPool).
const maxBufferedBody = 64 << 10

// proxyBufferSize is the size of the buffers the proxies copy bodies
// through, that of httputil.ReverseProxy's own.
const proxyBufferSize = 32 << 10

// bufferPool is the proxies' httputil.BufferPool: without one, every
// request allocates a buffer of proxyBufferSize for its response.
type bufferPool struct{ pool sync.Pool }

// Get returns a buffer of proxyBufferSize bytes.
func (b *bufferPool) Get() []byte {
	if p, ok := b.pool.Get().(*[]byte); ok {
		return *p
	}
	return make([]byte, proxyBufferSize)
}

// Put keeps buf for another Get.
func (b *bufferPool) Put(buf []byte) {
	if cap(buf) < proxyBufferSize {
		return
	}
	buf = buf[:proxyBufferSize]
	b.pool.Put(&buf)
}
