package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/activity"
)

// Handler serves the sidecar's own paths and proxies every other request
// to the upstream, recording client activity.
type Handler struct {
	// token, when set, is what a proxied request must carry (see
	// authorize).
	token        string
	rec          *Recorder
	proxy        *httputil.ReverseProxy
	upstreamHost string
	dialTimeout  time.Duration
}

// NewHandler returns a handler that proxies to upstream (http://host:port)
// and records in rec; dialTimeout bounds each connection to the upstream.
func NewHandler(rec *Recorder, upstream *url.URL, dialTimeout time.Duration) *Handler {
	dialer := &net.Dialer{Timeout: dialTimeout}
	transport := &http.Transport{
		// The upstream is in the pod: no proxy from the environment.
		Proxy:               nil,
		DialContext:         dialer.DialContext,
		MaxIdleConns:        32,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     90 * time.Second,
	}
	h := &Handler{rec: rec, upstreamHost: upstream.Host, dialTimeout: dialTimeout}
	h.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			// The workload sees the client's Host (Jupyter checks a
			// websocket's Origin against it) and query, as sent.
			pr.Out.Host = pr.In.Host
			pr.Out.URL.RawQuery = pr.In.URL.RawQuery
			// Keep what a proxy in front (an ingress) said, then add the
			// sidecar's hop.
			for _, k := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
				if v, ok := pr.In.Header[k]; ok {
					pr.Out.Header[k] = v
				}
			}
			proto, host := pr.Out.Header.Get("X-Forwarded-Proto"), pr.Out.Header.Get("X-Forwarded-Host")
			pr.SetXForwarded()
			if proto != "" {
				pr.Out.Header.Set("X-Forwarded-Proto", proto)
			}
			if host != "" {
				pr.Out.Header.Set("X-Forwarded-Host", host)
			}
			pr.Out.Header.Del(activity.ProbeHeader)
		},
		Transport:  transport,
		BufferPool: bufferPool{},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			klog.FromContext(r.Context()).V(2).Info("Proxying failed", "path", r.URL.Path, "err", err)
			http.Error(w, "the workload is not reachable", http.StatusBadGateway)
		},
	}
	return h
}

// WithAccessToken makes h proxy only the requests that carry token, or
// come from the pod's loopback; others get 401. The sidecar's own paths
// need no token. An empty token checks nothing.
func (h *Handler) WithAccessToken(token string) *Handler {
	h.token = token
	return h
}

// ServeHTTP answers the sidecar's paths and proxies the rest.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case activity.ReportPath:
		h.report(w, r)
		return
	case activity.HealthzPath:
		_, _ = io.WriteString(w, "ok")
		return
	case activity.ReadyzPath:
		h.ready(w, r)
		return
	}
	if h.token != "" {
		v, out := authorize(r, h.token)
		switch v {
		case deny:
			unauthorized(w)
			return
		case redirect:
			setCookieRedirect(w, r, out, h.token)
			return
		}
		r = out
	}
	counted := r.Header.Get(activity.ProbeHeader) == ""
	if counted {
		h.rec.Request()
	}
	if upgrade(r.Header) != "" {
		// The client's data on the upgraded connection is read through
		// the hijacked connection the proxy gets from w.
		onData := func([]byte) {}
		if counted {
			onData = h.dataRecorder(r.Header)
		}
		w = &hijacker{ResponseWriter: w, onData: onData}
	}
	h.proxy.ServeHTTP(w, r)
}

// dataRecorder returns what records the client's data on an upgraded
// connection: its websocket data frames, or any byte of another protocol.
func (h *Handler) dataRecorder(header http.Header) func([]byte) {
	if upgrade(header) != "websocket" {
		return func([]byte) { h.rec.Request() }
	}
	s := &frameScanner{}
	return func(p []byte) {
		if s.scan(p) {
			h.rec.Request()
		}
	}
}

// upgrade returns the protocol, lower case, a request asks to upgrade to,
// or "".
func upgrade(header http.Header) string {
	if !httpguts.HeaderValuesContainsToken(header["Connection"], "Upgrade") {
		return ""
	}
	var p string
	for _, v := range header.Values("Upgrade") {
		if v != "" {
			p = v
			break
		}
	}
	if httpguts.HeaderValuesContainsToken([]string{p}, "websocket") {
		return "websocket"
	}
	return p
}

// report answers the Report as JSON.
func (h *Handler) report(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	b, err := json.Marshal(h.rec.Report())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method == http.MethodGet {
		_, _ = w.Write(append(b, '\n'))
	}
}

// ready answers 200 when the upstream takes a connection.
func (h *Handler) ready(w http.ResponseWriter, r *http.Request) {
	d := net.Dialer{Timeout: h.dialTimeout}
	c, err := d.DialContext(r.Context(), "tcp", h.upstreamHost)
	if err != nil {
		http.Error(w, "the workload does not take connections yet", http.StatusServiceUnavailable)
		return
	}
	_ = c.Close()
	_, _ = io.WriteString(w, "ok")
}

// hijacker is a ResponseWriter whose hijacked connection reports the
// client's data to onData.
type hijacker struct {
	http.ResponseWriter
	onData func([]byte)
}

// Hijack hijacks the underlying connection and wraps it.
func (w *hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	return &clientConn{Conn: conn, buffered: brw.Reader, onData: w.onData}, brw, nil
}

// Flush flushes the underlying writer.
func (w *hijacker) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap returns the underlying writer, for http.ResponseController.
func (w *hijacker) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// clientConn is a client's connection that reports what it reads to
// onData. It reads first what the server had buffered.
type clientConn struct {
	net.Conn
	buffered *bufio.Reader
	onData   func([]byte)
}

// Read reads from the client.
func (c *clientConn) Read(p []byte) (int, error) {
	var n int
	var err error
	if c.buffered != nil && c.buffered.Buffered() > 0 {
		n, err = c.buffered.Read(p)
	} else {
		n, err = c.Conn.Read(p)
	}
	if n > 0 {
		c.onData(p[:n])
	}
	return n, err
}

// CloseWrite half-closes the connection where it can.
func (c *clientConn) CloseWrite() error { return closeWrite(c.Conn) }

// closeWrite half-closes c, or fails with errors.ErrUnsupported.
func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// copyBufferSize is the size of the buffers of proxied bodies.
const copyBufferSize = 32 << 10

// buffers are the reused copy buffers.
var buffers = sync.Pool{New: func() any { b := make([]byte, copyBufferSize); return &b }}

// bufferPool lends the proxy its copy buffers.
type bufferPool struct{}

func (bufferPool) Get() []byte  { return *(buffers.Get().(*[]byte)) }
func (bufferPool) Put(b []byte) { buffers.Put(&b) }

// serveHTTP serves h on ln until ctx ends, then stops taking requests and
// waits a while for those under way.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		// Requests end with ctx, websockets included.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
