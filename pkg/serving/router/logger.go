package router

import (
	"context"
	"fmt"
	"io"
	"net/http"
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
// CloudEvents HTTP binding (binary mode) and sends it with a plain
// http.Client: the SDK's client would validate, default and trace each
// event again, for nothing.
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
// their bodies.
type queue struct {
	url    string
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
		l.queues[url] = q
		for range l.opts.Workers {
			l.wg.Add(1)
			go l.work(url, q)
		}
	}
	return q
}

// work delivers the events of q to url until the logger's context ends.
func (l *eventLogger) work(url string, q *queue) {
	defer l.wg.Done()
	for {
		select {
		case <-l.ctx.Done():
			return
		case e := <-q.events:
			q.bytes.Add(-int64(len(e.Data())))
			if err := l.deliver(url, &e); err == nil {
				l.sent.Add(1)
			} else {
				l.failed.Add(1)
				klog.FromContext(l.ctx).V(3).Info("Could not deliver a logger event", "url", url, "id", e.ID(), "err", err)
			}
		}
	}
}

// deliver POSTs e to url in binary mode; a status other than 2xx fails.
func (l *eventLogger) deliver(url string, e *event.Event) error {
	req, err := http.NewRequestWithContext(l.ctx, http.MethodPost, url, nil)
	if err != nil {
		return err
	}
	if err := cehttp.WriteRequest(binding.WithForceBinary(l.ctx), binding.ToMessage(e), req); err != nil {
		return fmt.Errorf("encoding the event: %w", err)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return err
	}
	// Drain a short answer, so that the connection is kept.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the sink answered %s", resp.Status)
	}
	return nil
}

// stats returns the counts so far.
func (l *eventLogger) stats() Stats {
	return Stats{Sent: l.sent.Load(), Failed: l.failed.Load(), Dropped: l.drops.Load()}
}
