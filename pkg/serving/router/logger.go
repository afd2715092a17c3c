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
// connection pool (an http:// URL), pipelined with the others waiting, or
// with a plain http.Client (https://): the SDK's client would validate,
// default and trace each event again, for nothing.
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
		q = l.newQueue(url)
		l.queues[url] = q
		for range l.opts.Workers {
			l.wg.Add(1)
			go l.work(q)
		}
	}
	return q
}

// newQueue returns an empty queue for url, without workers.
func (l *eventLogger) newQueue(url string) *queue {
	q := &queue{url: url, events: make(chan event.Event, l.opts.QueueSize)}
	if u, err := neturl.Parse(url); err == nil && u.Scheme == "http" {
		d := &net.Dialer{Timeout: l.opts.SendTimeout, KeepAlive: 30 * time.Second}
		q.pool = &connPool{target: u, dial: d.DialContext}
	}
	return q
}

// A worker sends at most maxPipelined events on its connection to an
// http:// URL before it reads their answers, and adds none once their
// bodies reach maxPipelinedBytes: a sink that echoes the bodies cannot fill
// the answers' socket buffers while the worker still writes.
const (
	maxPipelined      = 32
	maxPipelinedBytes = 64 << 10
)

// work delivers the events of q until the logger's context ends: those
// waiting when it takes one go out together, within the bounds above.
func (l *eventLogger) work(q *queue) {
	defer l.wg.Done()
	batch := make([]event.Event, 0, maxPipelined)
	for {
		select {
		case <-l.ctx.Done():
			return
		case e := <-q.events:
			batch = append(batch[:0], e)
		}
		if q.pool != nil {
			batch = gather(q, batch)
		}
		for i := range batch {
			q.bytes.Add(-int64(len(batch[i].Data())))
		}
		sent, err := l.deliver(q, batch)
		l.sent.Add(int64(sent))
		if failed := len(batch) - sent; failed > 0 {
			l.failed.Add(int64(failed))
			klog.FromContext(l.ctx).V(3).Info("Could not deliver logger events", "url", q.url, "failed", failed, "of", len(batch), "err", err)
		}
		clear(batch) // their bodies are garbage now
	}
}

// gather adds to batch the events waiting in q, within the bounds of a
// pipeline.
func gather(q *queue, batch []event.Event) []event.Event {
	size := 0
	for i := range batch {
		size += len(batch[i].Data())
	}
	for len(batch) < maxPipelined && size < maxPipelinedBytes {
		select {
		case e := <-q.events:
			batch = append(batch, e)
			size += len(e.Data())
		default:
			return batch
		}
	}
	return batch
}

// deliver POSTs events to q's URL in binary mode, within the send timeout,
// pipelined on one connection to an http:// URL; it returns how many the
// sink took (answered 2xx), and why the others were not.
func (l *eventLogger) deliver(q *queue, events []event.Event) (int, error) {
	ctx, cancel := context.WithTimeout(l.ctx, l.opts.SendTimeout)
	defer cancel()
	reqs := make([]*http.Request, 0, len(events))
	bodies := make([][]byte, 0, len(events))
	var err error
	for i := range events {
		req, rerr := eventRequest(ctx, q.url, &events[i])
		if rerr != nil {
			err = rerr
			continue
		}
		reqs = append(reqs, req)
		bodies = append(bodies, events[i].Data()) // the body of an event in binary mode is its data
	}
	sent := 0
	took := func(_ int, resp *http.Response) error {
		derr := drain(resp.Body, nil)
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			err = fmt.Errorf("the sink answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
		} else if derr == nil {
			sent++
		}
		return derr
	}
	if q.pool != nil {
		if _, serr := q.pool.sendAll(ctx, reqs, bodies, took); serr != nil {
			err = serr
		}
		return sent, err
	}
	for i, req := range reqs {
		resp, derr := l.client.Do(req)
		if derr != nil {
			return sent, derr
		}
		derr = took(i, resp)
		resp.Body.Close()
		if derr != nil {
			err = derr
		}
	}
	return sent, err
}

// eventRequest returns the POST of e to url in binary mode.
func eventRequest(ctx context.Context, url string, e *event.Event) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return nil, err
	}
	if err := cehttp.WriteRequest(binding.WithForceBinary(ctx), binding.ToMessage(e), req); err != nil {
		return nil, fmt.Errorf("encoding the event: %w", err)
	}
	return req, nil
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
