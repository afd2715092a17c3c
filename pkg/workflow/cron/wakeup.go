package cron

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/event"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// rearmSlack is how far the clock may move while a timer is armed before
// the timer is armed again: a fake clock stepped in that moment would
// otherwise fire the timer late by the step.
const rearmSlack = 50 * time.Millisecond

// wakeups asks for a reconcile of a CronWorkflowRun when the controller's
// clock reaches a time. It stands in for ctrl.Result.RequeueAfter, which
// waits in real time: with a fake clock (tests, the bench) stepping the
// clock past a CronWorkflowRun's next time must wake it. At most one
// wake-up is pending per CronWorkflowRun; each is a goroutine waiting on a
// timer of the clock. It is a manager.Runnable: the manager's stop ends the
// waits.
type wakeups struct {
	clock clock.Clock
	// events feeds the controller (source.Channel).
	events chan event.GenericEvent

	mu      sync.Mutex
	pending map[types.NamespacedName]*wakeup
	stopped bool
}

// wakeup is one pending wake-up.
type wakeup struct {
	at   time.Time
	stop chan struct{}
}

func newWakeups(clk clock.Clock) *wakeups {
	return &wakeups{clock: clk, events: make(chan event.GenericEvent, 1024), pending: map[types.NamespacedName]*wakeup{}}
}

// at wakes the CronWorkflowRun key at t, replacing its pending wake-up.
func (w *wakeups) at(key types.NamespacedName, t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if p := w.pending[key]; p != nil {
		if p.at.Equal(t) {
			return
		}
		close(p.stop)
	}
	p := &wakeup{at: t, stop: make(chan struct{})}
	w.pending[key] = p
	go w.wait(key, p)
}

// cancel drops the pending wake-up of key, if any.
func (w *wakeups) cancel(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.pending[key]; p != nil {
		close(p.stop)
		delete(w.pending, key)
	}
}

// when returns the time of key's pending wake-up; zero when none.
func (w *wakeups) when(key types.NamespacedName) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.pending[key]; p != nil {
		return p.at
	}
	return time.Time{}
}

// wait sends key's event once the clock reaches p.at, unless stopped.
func (w *wakeups) wait(key types.NamespacedName, p *wakeup) {
	for {
		select {
		case <-p.stop:
			return
		default:
		}
		now := w.clock.Now()
		if !now.Before(p.at) {
			break
		}
		timer := w.clock.NewTimer(p.at.Sub(now))
		if w.clock.Since(now) > rearmSlack {
			timer.Stop()
			continue
		}
		select {
		case <-timer.C():
		case <-p.stop:
			timer.Stop()
			return
		}
	}
	obj := &batchv1beta1.CronWorkflowRun{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	select {
	case w.events <- event.GenericEvent{Object: obj}:
	case <-p.stop:
		return
	}
	w.mu.Lock()
	if w.pending[key] == p {
		delete(w.pending, key)
	}
	w.mu.Unlock()
}

// Start waits until ctx ends, then stops every pending wake-up.
func (w *wakeups) Start(ctx context.Context) error {
	<-ctx.Done()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	for key, p := range w.pending {
		close(p.stop)
		delete(w.pending, key)
	}
	return nil
}
