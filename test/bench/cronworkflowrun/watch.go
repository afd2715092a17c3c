package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// nsWatch follows the runs and the CronWorkflowRun of the bench's
// namespace: how often each run's name is added, and lastScheduleTime.
type nsWatch struct {
	mu     sync.Mutex
	cond   *sync.Cond
	adds   map[string]int
	last   time.Time
	err    error
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func watchNamespace(ctx context.Context, c client.WithWatch) (*nsWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &nsWatch{adds: map[string]int{}, cancel: cancel}
	w.cond = sync.NewCond(&w.mu)
	runs, err := c.Watch(ctx, &batchv1beta1.WorkflowRunList{}, client.InNamespace(namespace))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watching runs: %w", err)
	}
	crons, err := c.Watch(ctx, &batchv1beta1.CronWorkflowRunList{}, client.InNamespace(namespace))
	if err != nil {
		cancel()
		runs.Stop()
		return nil, fmt.Errorf("watching CronWorkflowRuns: %w", err)
	}
	for _, wi := range []watch.Interface{runs, crons} {
		w.done.Add(1)
		go w.follow(ctx, wi)
	}
	return w, nil
}

func (w *nsWatch) follow(ctx context.Context, wi watch.Interface) {
	defer w.done.Done()
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok {
				w.fail(errors.New("a watch closed early"))
				return
			}
			w.mu.Lock()
			switch o := ev.Object.(type) {
			case *batchv1beta1.WorkflowRun:
				if ev.Type == watch.Added {
					w.adds[o.Name]++
				}
			case *batchv1beta1.CronWorkflowRun:
				if o.Status.LastScheduleTime != nil {
					w.last = o.Status.LastScheduleTime.Time
				}
			default:
				if ev.Type == watch.Error && w.err == nil {
					w.err = fmt.Errorf("watch error: %v", ev.Object)
				}
			}
			w.cond.Broadcast()
			w.mu.Unlock()
		}
	}
}

func (w *nsWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
	w.cond.Broadcast()
}

// waitFor waits up to timeout until the run is added and lastScheduleTime
// is at, and reports whether they were.
func (w *nsWatch) waitFor(ctx context.Context, run string, at time.Time, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	wake := time.AfterFunc(timeout, func() { w.mu.Lock(); w.cond.Broadcast(); w.mu.Unlock() })
	defer wake.Stop()
	stop := context.AfterFunc(ctx, func() { w.mu.Lock(); w.cond.Broadcast(); w.mu.Unlock() })
	defer stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.adds[run] == 0 || !w.last.Equal(at) {
		if ctx.Err() != nil || w.err != nil || !time.Now().Before(deadline) {
			return false
		}
		w.cond.Wait()
	}
	return true
}

// added returns how often each run's name was added.
func (w *nsWatch) added() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.adds)
}

func (w *nsWatch) error() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *nsWatch) stop() {
	w.cancel()
	w.done.Wait()
}
