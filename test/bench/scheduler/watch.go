package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// podWatch follows the pods of one namespace through a watch and notes,
// by the bench's clock, when each was first seen bound, nominated to a
// node and deleted (marked for deletion or gone).
type podWatch struct {
	mu sync.Mutex
	// groupLabel is the label naming a pod's gang, if any.
	groupLabel string
	bound      map[string]time.Time
	nominated  map[string]time.Time
	deleted    map[string]time.Time
	// group is the gang of each pod that has one.
	group map[string]string
	stop  context.CancelFunc
}

// watchPods starts following namespace's pods; groupLabel names the label
// whose value is a pod's gang ("" for none).
func watchPods(ctx context.Context, cs kubernetes.Interface, namespace, groupLabel string) (*podWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &podWatch{
		groupLabel: groupLabel, stop: cancel,
		bound: map[string]time.Time{}, nominated: map[string]time.Time{}, deleted: map[string]time.Time{}, group: map[string]string{},
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(namespace))
	inf := f.Core().V1().Pods().Informer()
	// Only what the bench reads is kept: 10000 pods' managed fields and
	// status would be most of the bench's memory.
	_ = inf.SetTransform(func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			p.ManagedFields = nil
			p.Spec = corev1.PodSpec{NodeName: p.Spec.NodeName}
			p.Status = corev1.PodStatus{NominatedNodeName: p.Status.NominatedNodeName}
		}
		return obj, nil
	})
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(obj, false) },
		UpdateFunc: func(_, obj any) { w.observe(obj, false) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			w.observe(obj, true)
		},
	}); err != nil {
		cancel()
		return nil, err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		cancel()
		return nil, fmt.Errorf("the watch of namespace %s did not sync", namespace)
	}
	return w, nil
}

func (w *podWatch) observe(obj any, gone bool) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.groupLabel != "" {
		if g := p.Labels[w.groupLabel]; g != "" {
			w.group[p.Name] = g
		}
	}
	note := func(m map[string]time.Time) {
		if _, ok := m[p.Name]; !ok {
			m[p.Name] = now
		}
	}
	if p.Spec.NodeName != "" {
		note(w.bound)
	}
	if p.Status.NominatedNodeName != "" {
		note(w.nominated)
	}
	if gone || p.DeletionTimestamp != nil {
		note(w.deleted)
	}
}

// boundCount is the number of pods seen bound.
func (w *podWatch) boundCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.bound)
}

// bindTimes returns the first and the last time a pod was seen bound.
func (w *podWatch) bindTimes() (first, last time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.bound {
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	return first, last
}

// boundByGroup counts the pods seen bound per gang.
func (w *podWatch) boundByGroup() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for name := range w.bound {
		if g := w.group[name]; g != "" {
			out[g]++
		}
	}
	return out
}

// groupSpreads returns, per gang with size pods bound, the time from its
// first pod bound to its last.
func (w *podWatch) groupSpreads(size int) []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	type span struct {
		first, last time.Time
		n           int
	}
	spans := map[string]*span{}
	for name, t := range w.bound {
		g := w.group[name]
		if g == "" {
			continue
		}
		s := spans[g]
		if s == nil {
			s = &span{first: t, last: t}
			spans[g] = s
		}
		s.n++
		if t.Before(s.first) {
			s.first = t
		}
		if t.After(s.last) {
			s.last = t
		}
	}
	var out []time.Duration
	for _, s := range spans {
		if s.n >= size {
			out = append(out, s.last.Sub(s.first))
		}
	}
	return out
}

// timesOf returns when pod was seen bound, nominated and deleted (zero
// when not).
func (w *podWatch) timesOf(pod string) (bound, nominated, deleted time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bound[pod], w.nominated[pod], w.deleted[pod]
}

// firstDeletedSince returns the earliest deletion seen at or after t, and
// the name of that pod.
func (w *podWatch) firstDeletedSince(t time.Time) (time.Time, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var first time.Time
	var name string
	for n, d := range w.deleted {
		if !d.Before(t) && (first.IsZero() || d.Before(first)) {
			first, name = d, n
		}
	}
	return first, name
}

// waitFor polls cond every 50ms until it holds or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
}
