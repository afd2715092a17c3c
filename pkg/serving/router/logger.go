package router

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"k8s.io/klog/v2"
)

// The CloudEvents types of the logged requests and responses.
const (
	TypeRequest  = "tensorstack.dev.mlservice.request"
	TypeResponse = "tensorstack.dev.mlservice.response"
)

// The CloudEvents extensions of the logged events.
const (
	ExtComponent     = "component"
	ExtInferenceURL  = "inferenceurl"
	ExtMLServiceName = "mlservicename"
	ExtNamespace     = "namespace"
	ExtTraceParent   = "traceparent"
)

// Stats counts the events of a logger.
type Stats struct {
	// Sent were delivered, Failed were refused or timed out, Dropped found
	// their queue full.
	Sent, Failed, Dropped int64
}

// eventLogger delivers events to the logger URLs, through a bounded queue
// and workers per URL. It writes each event into its POST with the
// CloudEvents HTTP binding (binary mode) and sends it on the URL's
// connection pool (an http:// URL) or with a plain http.Client (https://):
// the SDK's client would validate, default and trace each event again, for
// nothing.
type eventLogger struct {
	opts   Options
	client *http.Client
	mu     sync.Mutex
	queues map[string]*queue
	wg     sync.WaitGroup
	ctx    context.Context
	sent   atomic.Int64
	failed atomic.Int64
	drops  atomic.Int64
}

// newEventLogger returns a logger whose workers stop when ctx ends.
func newEventLogger(ctx context.Context, opts Options) *eventLogger {
	tr := &http.Transport{MaxIdleConnsPerHost: opts.Workers, IdleConnTimeout: 90 * time.Second, DisableCompression: true}
	return &eventLogger{opts: opts, client: &http.Client{Timeout: opts.SendTimeout, Transport: tr}, queues: map[string]*queue{}, ctx: ctx}
}

// queue holds the events waiting for one logger URL, and the bytes of
// their bodies; pool sends them to an http:// URL.
type queue struct {
	url    string
	pool   *connPool
	events chan event.Event
	bytes  atomic.Int64
}

// enqueue queues e on q without blocking: a queue full of events, or whose
// bodies would exceed MaxQueuedBytes with e's, drops it.
func (l *eventLogger) enqueue(q *queue, e event.Event) {
	size := int64(len(e.Data()))
	if q.bytes.Add(size) <= int64(l.opts.MaxQueuedBytes) {
		select {
		case q.events <- e:
			return
		default:
		}
	}
	q.bytes.Add(-size)
	if n := l.drops.Add(1); n&(n-1) == 0 { // log at powers of two
		klog.FromContext(l.ctx).Info("Dropped logger events, the sink is too slow", "url", q.url, "dropped", n)
	}
}

// queue returns the queue of url, starting its workers the first time;
// the router takes the queues of its targets' URLs once, in New.
func (l *eventLogger) queue(url string) *queue {
	l.mu.Lock()
	defer l.mu.Unlock()
	q, ok := l.queues[url]
	if !ok {
		q = &queue{url: url, events: make(chan event.Event, l.opts.QueueSize)}
		if u, err := neturl.Parse(url); err == nil && u.Scheme == "http" {
			d := &net.Dialer{Timeout: l.opts.SendTimeout, KeepAlive: 30 * time.Second}
			q.pool = &connPool{target: u, dial: d.DialContext}
		}
		l.queues[url] = q
		for range l.opts.Workers {
			l.wg.Add(1)
			go l.work(q)
		}
	}
	return q
}

// work delivers the events of q until the logger's context ends.
func (l *eventLogger) work(q *queue) {
	defer l.wg.Done()
	for {
		select {
		case <-l.ctx.Done():
			return
		case e := <-q.events:
			q.bytes.Add(-int64(len(e.Data())))
			if err := l.deliver(q, &e); err == nil {
				l.sent.Add(1)
			} else {
				l.failed.Add(1)
				klog.FromContext(l.ctx).V(3).Info("Could not deliver a logger event", "url", q.url, "id", e.ID(), "err", err)
			}
		}
	}
}

// deliver POSTs e to q's URL in binary mode, within the send timeout; a
// status other than 2xx fails.
func (l *eventLogger) deliver(q *queue, e *event.Event) error {
	ctx, cancel := context.WithTimeout(l.ctx, l.opts.SendTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, q.url, nil)
	if err != nil {
		return err
	}
	if err := cehttp.WriteRequest(binding.WithForceBinary(ctx), binding.ToMessage(e), req); err != nil {
		return fmt.Errorf("encoding the event: %w", err)
	}
	var status int
	if q.pool != nil && q.pool.takes(req) {
		// The body of an event in binary mode is its data.
		x, err := q.pool.send(ctx, req, e.Data())
		if err != nil {
			return err
		}
		status = x.resp.StatusCode
		x.finish(drain(x.resp.Body, x.conn.buf))
	} else {
		resp, err := l.client.Do(req)
		if err != nil {
			return err
		}
		status = resp.StatusCode
		_ = drain(resp.Body, nil)
		resp.Body.Close()
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("the sink answered %d %s", status, http.StatusText(status))
	}
	return nil
}

// maxSinkAnswer is the most of a sink's answer read, so that its
// connection is kept; a longer one is cut.
const maxSinkAnswer = 64 << 10

// drain reads body to its end, through buf when given; an answer longer
// than maxSinkAnswer is an error.
func drain(body io.Reader, buf []byte) error {
	n, err := io.CopyBuffer(io.Discard, io.LimitReader(body, maxSinkAnswer+1), buf)
	if err == nil && n > maxSinkAnswer {
		err = errors.New("the sink's answer is too long")
	}
	return err
}

// stats returns the counts so far.
func (l *eventLogger) stats() Stats {
	return Stats{Sent: l.sent.Load(), Failed: l.failed.Load(), Dropped: l.drops.Load()}
}
