package router

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// newTransport returns the transport of the router's proxies, shared by
// all targets. It keeps up to 256 idle connections per release, enough
// for the clients of a busy model server. It never asks for compression:
// the client's own Accept-Encoding reaches the model server unchanged, so
// the router neither asks for a gzipped response its client did not want
// nor spends its CPU inflating one. Releases are http://, so HTTP/2 is never
// attempted. Small request bodies are sent with their headers (see
// bodyBuffering).
func newTransport() *bodyBuffering {
	d := &spreadDialer{dialer: net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}, lookup: net.DefaultResolver.LookupHost}
	return &bodyBuffering{next: &http.Transport{
		Proxy: nil, DialContext: d.DialContext,
		MaxIdleConns: 1024, MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second,
		DisableCompression: true, ForceAttemptHTTP2: false,
	}}
}

// maxBufferedBody is the largest request body bodyBuffering reads whole
// before the request goes out.
const maxBufferedBody = 64 << 10

// bodyBuffering is a RoundTripper that reads a request body of a declared
// size up to maxBufferedBody whole, then passes the request on to next
// with the body in memory. http.Transport writes the headers of a body it
// cannot tell is in memory on their own, then the body, and
// httputil.ReverseProxy hands it every body wrapped: each proxied request
// would be two writes and two packets, and two reads for the model server,
// where the client sent one. Larger bodies, and those of unknown size,
// stream as they come.
type bodyBuffering struct {
	next http.RoundTripper
}

// RoundTrip sends req through next, its body read first when it is small.
func (t *bodyBuffering) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.ContentLength <= 0 || req.ContentLength > maxBufferedBody {
		return t.next.RoundTrip(req)
	}
	b, err := readBody(req.Body, req.ContentLength, maxBufferedBody)
	if err != nil {
		req.Body.Close()
		return nil, fmt.Errorf("reading the request body: %w", err)
	}
	out := *req // a RoundTripper does not modify its request
	if int64(len(b)) == req.ContentLength {
		req.Body.Close()
		out.Body = io.NopCloser(bytes.NewReader(b))
	} else { // a body longer than it said: what was read, then the rest
		out.Body = readCloser{io.MultiReader(bytes.NewReader(b), req.Body), req.Body}
	}
	return t.next.RoundTrip(&out)
}

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
