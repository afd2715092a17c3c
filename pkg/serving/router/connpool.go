package router

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// connPool sends the requests it can take in one piece to one http://
// URL, on keep-alive HTTP/1.1 connections, writing each request and
// reading its answer on the calling goroutine. http.Transport hands every
// request to a writing and a reading goroutine of the connection and
// back, several switches between goroutines, often between threads, for
// a prediction or an event of a few hundred bytes; here there are none.
// The request and the answer are written and parsed by net/http itself
// (Request.Write, ReadResponse). The router sends everything else (https,
// bodies of unknown or large size, upgrades, 100-continue) through
// http.Transport.
type connPool struct {
	target *url.URL
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	// idleTimeout closes a connection idle longer, so that a release's
	// new pods get connections as its old ones are given up.
	idleTimeout time.Duration
	mu          sync.Mutex
	idle        []*upstreamConn // the most recently used last
}

// The idle connections a URL keeps, at most, and for how long; as the
// router's http.Transport keeps them.
const (
	maxIdleUpstream     = 256
	upstreamIdleTimeout = 90 * time.Second
)

// upstreamConn is a connection with its buffers: those of its reads and
// writes, and the one its answers are copied through, so that a request
// on a kept connection allocates none.
type upstreamConn struct {
	net.Conn
	r         *bufio.Reader
	w         *bufio.Writer
	buf       []byte
	idleSince time.Time
	// kept is set once the connection served a request and was kept.
	kept bool
}

// exchange is a request sent and the head of its answer.
type exchange struct {
	pool *connPool
	conn *upstreamConn
	resp *http.Response
	// stop ends the watch on the request's context; false when the
	// context ended first and the connection was cut.
	stop func() bool
}

// takes says whether req can be sent in one piece: the URL is http://,
// the body is in memory-sized bounds and declared, and nothing asks for
// more than one exchange on the connection.
func (u *connPool) takes(req *http.Request) bool {
	return u.target.Scheme == "http" && req.ProtoMajor == 1 && req.ContentLength >= 0 && req.ContentLength <= maxBufferedBody &&
		len(req.TransferEncoding) == 0 && req.Header.Get("Upgrade") == "" && req.Header.Get("Expect") == ""
}

// serve proxies req, which takes accepts, to the release and writes the
// answer to w. An error means nothing was written: the release could not
// be reached or did not answer. An answer cut short after its head aborts
// the handler, as httputil.ReverseProxy does, so that the client does not
// take it for a whole one.
func (u *connPool) serve(w http.ResponseWriter, req *http.Request) error {
	var body []byte
	if req.ContentLength > 0 {
		b, _, _, err := readBody(req.Body, req.ContentLength, maxBufferedBody, nil)
		if err != nil {
			return fmt.Errorf("reading the request body: %w", err)
		}
		body = b
	}
	x, err := u.send(req.Context(), u.outgoing(req), body)
	if err != nil {
		return err
	}
	h := w.Header()
	for k, vv := range x.resp.Header {
		h[k] = vv
	}
	removeHopHeaders(h)
	w.WriteHeader(x.resp.StatusCode)
	_, err = io.CopyBuffer(w, x.resp.Body, x.conn.buf)
	if x.finish(err) {
		for k, vv := range x.resp.Trailer {
			h[http.TrailerPrefix+k] = vv
		}
	} else if err != nil && req.Context().Value(http.ServerContextKey) != nil {
		panic(http.ErrAbortHandler)
	}
	return nil
}

// send writes out with body on a kept connection, or a new one, and reads
// the head of its answer, past any informational (1xx) answers. A client
// whose context ends cuts the connection: its reads and writes fail at
// once. A request is sent once: http.Transport does not send a POST again
// either when the connection fails under it.
func (u *connPool) send(ctx context.Context, out *http.Request, body []byte) (*exchange, error) {
	c, err := u.get(ctx)
	if err != nil {
		return nil, err
	}
	x := &exchange{pool: u, conn: c}
	x.stop = context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	err = c.write(out, body)
	if err == nil {
		err = c.w.Flush()
	}
	if err == nil {
		if x.resp, err = c.answer(out); err == nil {
			return x, nil
		}
	}
	x.stop()
	c.Close()
	return nil, err
}

// sendAll writes the requests outs, with their bodies, on one connection
// before it reads any answer (HTTP/1.1 pipelining), then reads the answers
// in order and hands each to answered, which reads its body. It returns
// how many answers were read whole.
//
// A new connection takes one request first, and the rest only once its
// answer shows that it is kept: a server of HTTP/1.0, or one that closes
// every connection, gets one request per connection. Requests left
// unanswered by an answer that closes the connection were not processed
// (RFC 9112, section 9.6) and go out again on another; otherwise, as with
// send, each request is sent once, and the end of ctx cuts the connection.
func (u *connPool) sendAll(ctx context.Context, outs []*http.Request, bodies [][]byte, answered func(i int, resp *http.Response) error) (int, error) {
	done := 0
	for done < len(outs) {
		c, err := u.get(ctx)
		if err != nil {
			return done, err
		}
		end := len(outs)
		if !c.kept {
			end = done + 1
		}
		from := done
		stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
		n, keep, err := c.exchangeAll(outs[from:end], bodies[from:end], func(i int, resp *http.Response) error {
			return answered(from+i, resp)
		})
		done += n
		if !stop() || !keep {
			c.Close()
		} else {
			u.put(c)
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// exchangeAll writes outs on c, then reads as many answers as c gives
// before it closes; keep says whether c may be kept.
func (c *upstreamConn) exchangeAll(outs []*http.Request, bodies [][]byte, answered func(i int, resp *http.Response) error) (n int, keep bool, err error) {
	for i, out := range outs {
		if err := c.write(out, bodies[i]); err != nil {
			return 0, false, err
		}
	}
	if err := c.w.Flush(); err != nil {
		return 0, false, err
	}
	for i, out := range outs {
		resp, err := c.answer(out)
		if err != nil {
			return i, false, err
		}
		err = answered(i, resp)
		resp.Body.Close()
		if err != nil {
			return i, false, err
		}
		if resp.Close { // the last answer on c
			return i + 1, false, nil
		}
	}
	return len(outs), true, nil
}

// write writes out with body to c's buffer.
func (c *upstreamConn) write(out *http.Request, body []byte) error {
	out.Body = nil
	if len(body) > 0 {
		out.Body = io.NopCloser(bytes.NewReader(body))
	}
	out.ContentLength = int64(len(body))
	return out.Write(c.w)
}

// answer reads the head of the answer to out, past any informational
// (1xx) answers.
func (c *upstreamConn) answer(out *http.Request) (*http.Response, error) {
	for {
		resp, err := http.ReadResponse(c.r, out)
		if err != nil || resp.StatusCode >= 200 || resp.StatusCode < 100 {
			return resp, err
		}
	}
}

// finish closes the answer's body, after its reader got err, and keeps
// the connection for another request when the answer was read whole and
// the connection may be kept; it says whether it was.
func (x *exchange) finish(err error) bool {
	x.resp.Body.Close()
	if !x.stop() || err != nil || x.resp.Close {
		x.conn.Close()
		return false
	}
	x.pool.put(x.conn)
	return true
}

// outgoing returns the request to the release for req: its URL on the
// release, the headers without the hop-by-hop ones and with the client's
// address in X-Forwarded-For, as httputil.ReverseProxy sends them.
func (u *connPool) outgoing(req *http.Request) *http.Request {
	h := make(http.Header, len(req.Header)+1)
	for k, vv := range req.Header {
		h[k] = vv
	}
	removeHopHeaders(h)
	if ip, _, err := net.SplitHostPort(req.RemoteAddr); err == nil {
		if prior, ok := h["X-Forwarded-For"]; ok {
			ip = strings.Join(prior, ", ") + ", " + ip
		}
		h["X-Forwarded-For"] = []string{ip}
	}
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = []string{""} // not Go's own
	}
	out := &http.Request{
		Method: req.Method, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		URL:    &url.URL{Scheme: u.target.Scheme, Host: u.target.Host, Path: joinPath(u.target.Path, req.URL.Path), RawQuery: req.URL.RawQuery},
		Header: h, Host: req.Host,
	}
	if req.URL.RawPath != "" { // escapes the client chose, such as %2F, kept
		out.URL.RawPath = joinPath(u.target.EscapedPath(), req.URL.EscapedPath())
	}
	if u.target.RawQuery != "" {
		out.URL.RawQuery = u.target.RawQuery + "&" + req.URL.RawQuery
	}
	return out
}

// get returns an idle connection that is still open and not idle for
// longer than the idle timeout, or dials one.
func (u *connPool) get(ctx context.Context) (*upstreamConn, error) {
	for {
		u.mu.Lock()
		n := len(u.idle)
		if n == 0 {
			u.mu.Unlock()
			break
		}
		c := u.idle[n-1]
		u.idle = u.idle[:n-1]
		u.mu.Unlock()
		if time.Since(c.idleSince) < u.timeout() && alive(c) {
			return c, nil
		}
		c.Close()
	}
	nc, err := u.dial(ctx, "tcp", canonicalAddr(u.target))
	if err != nil {
		return nil, err
	}
	return &upstreamConn{Conn: nc, r: bufio.NewReaderSize(nc, 4<<10), w: bufio.NewWriterSize(nc, 4<<10), buf: make([]byte, 16<<10)}, nil
}

// put keeps c for another request, or closes it when enough are kept,
// and closes those idle longer than the idle timeout.
func (u *connPool) put(c *upstreamConn) {
	if c.r.Buffered() > 0 { // bytes nobody asked for: not HTTP/1.1 as we know it
		c.Close()
		return
	}
	c.kept = true
	c.idleSince = time.Now()
	cutoff := c.idleSince.Add(-u.timeout())
	var stale []*upstreamConn
	u.mu.Lock()
	if len(u.idle) < maxIdleUpstream {
		u.idle = append(u.idle, c)
	} else {
		stale = append(stale, c)
	}
	n := 0 // the least recently used come first
	for n < len(u.idle) && u.idle[n].idleSince.Before(cutoff) {
		n++
	}
	if n > 0 {
		stale = append(stale, u.idle[:n]...)
		u.idle = append(u.idle[:0], u.idle[n:]...)
	}
	u.mu.Unlock()
	for _, s := range stale {
		s.Close()
	}
}

// timeout is the pool's idle timeout.
func (u *connPool) timeout() time.Duration {
	if u.idleTimeout > 0 {
		return u.idleTimeout
	}
	return upstreamIdleTimeout
}

// alive says whether an idle connection is still open: a peek at its
// socket that does not wait finds nothing to read. An end of stream (the
// release closed it) or bytes (an answer to nothing) mean it is not.
func alive(c *upstreamConn) bool {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	var b [1]byte
	cerr := raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = n < 0 && errors.Is(err, syscall.EAGAIN)
		return true
	})
	return cerr == nil && open
}

// hopHeaders are the headers of one connection, never forwarded (RFC 9110
// section 7.6.1), as httputil.ReverseProxy drops them.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// removeHopHeaders drops from h the hop-by-hop headers and those its
// Connection header names.
func removeHopHeaders(h http.Header) {
	for _, v := range h["Connection"] {
		for f := range strings.SplitSeq(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				delete(h, textproto.CanonicalMIMEHeaderKey(f))
			}
		}
	}
	for _, k := range hopHeaders {
		delete(h, k)
	}
}

// joinPath joins a release URL's path and a request's, with one slash
// between them.
func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	switch as, bs := strings.HasSuffix(a, "/"), strings.HasPrefix(b, "/"); {
	case as && bs:
		return a + b[1:]
	case !as && !bs:
		return a + "/" + b
	}
	return a + b
}

// canonicalAddr returns u's host with its port, 80 when it has none.
func canonicalAddr(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "80")
}
