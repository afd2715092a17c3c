package router

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
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
// and workers per URL.
type eventLogger struct {
	opts   Options
	client cloudevents.Client
	mu     sync.Mutex
	queues map[string]*queue
	wg     sync.WaitGroup
	ctx    context.Context
	sent   atomic.Int64
	failed atomic.Int64
	drops  atomic.Int64
}

// newEventLogger returns a logger whose workers stop when ctx ends.
func newEventLogger(ctx context.Context, opts Options) (*eventLogger, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: opts.Workers, IdleConnTimeout: 90 * time.Second}
	c, err := cloudevents.NewClientHTTP(cehttp.WithClient(http.Client{Timeout: opts.SendTimeout, Transport: tr}))
	if err != nil {
		return nil, err
	}
	return &eventLogger{opts: opts, client: c, queues: map[string]*queue{}, ctx: ctx}, nil
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
	ctx := cloudevents.WithEncodingBinary(cloudevents.ContextWithTarget(l.ctx, url))
	for {
		select {
		case <-l.ctx.Done():
			return
		case e := <-q.events:
			q.bytes.Add(-int64(len(e.Data())))
			if res := l.client.Send(ctx, e); cloudevents.IsACK(res) {
				l.sent.Add(1)
			} else {
				l.failed.Add(1)
				klog.FromContext(l.ctx).V(3).Info("Could not deliver a logger event", "url", url, "id", e.ID(), "err", res)
			}
		}
	}
}

// stats returns the counts so far.
func (l *eventLogger) stats() Stats {
	return Stats{Sent: l.sent.Load(), Failed: l.failed.Load(), Dropped: l.drops.Load()}
}
