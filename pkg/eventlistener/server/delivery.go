package server

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"k8s.io/klog/v2"
)

// maxRetryBackoff caps the wait between two attempts of a delivery.
const maxRetryBackoff = 30 * time.Second

// deliver sends e to every subscriber at once and waits for them. Each
// delivery is tried until the subscriber acknowledges it (a trigger does
// once its run exists), refuses it for good, or DeliveryDeadline passes:
// an event the listener acknowledged outlives an API server outage of
// that long. The events are held in memory only: those not delivered when
// the listener's pod stops are lost.
func (l *Listener) deliver(ctx context.Context, e event.Event) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.DeliveryDeadline)
	defer cancel()
	var wg sync.WaitGroup
	for _, target := range l.cfg.Subscribers {
		wg.Go(func() { l.deliverTo(ctx, e, target) })
	}
	wg.Wait()
}

// deliverTo delivers e to target until it is acknowledged, refused for
// good, or ctx ends.
func (l *Listener) deliverTo(ctx context.Context, e event.Event, target string) {
	log := klog.FromContext(ctx).WithValues("eventID", e.ID(), "subscriber", target)
	backoff := l.cfg.RetryBackoff
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(cloudevents.ContextWithTarget(ctx, target), l.cfg.SendTimeout)
		res := l.sender.Send(actx, e)
		cancel()
		switch {
		case cloudevents.IsACK(res):
			log.V(3).Info("Delivered an event", "attempts", attempt)
			return
		case !retriable(res):
			log.Error(res, "The subscriber refused an event", "attempts", attempt)
			return
		}
		// Jittered by half the backoff either way: replicas and events
		// retrying after one outage do not come back all at once.
		wait := time.Duration(rand.Int64N(int64(backoff))) + backoff/2
		log.V(2).Info("Delivering an event failed; retrying", "attempts", attempt, "wait", wait, "error", res.Error())
		select {
		case <-ctx.Done():
			log.Error(res, "Delivering an event failed until its deadline; the event is dropped", "attempts", attempt)
			return
		case <-time.After(wait):
		}
		backoff = min(2*backoff, maxRetryBackoff)
	}
}

// retriable reports whether a delivery that failed with res may succeed
// later: a network error, or an HTTP status that says so (404 while a
// trigger's Service has no endpoint yet, 408, 429, 5xx).
func retriable(res protocol.Result) bool {
	var hres *cehttp.Result
	if !errors.As(res, &hres) {
		return true
	}
	switch c := hres.StatusCode; {
	case c == http.StatusNotFound, c == http.StatusRequestTimeout, c == http.StatusTooManyRequests, c >= 500:
		return true
	}
	return false
}

// spool counts the bytes of the events held until delivered.
type spool struct {
	mu    sync.Mutex
	bytes int64
}

// take counts n more bytes unless that would pass limit.
func (s *spool) take(n, limit int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bytes+n > limit {
		return false
	}
	s.bytes += n
	return true
}

// give returns n bytes.
func (s *spool) give(n int64) {
	s.mu.Lock()
	s.bytes -= n
	s.mu.Unlock()
}
