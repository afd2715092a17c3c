package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/accelstack/accelstack/test/harness"
)

// objectWatch follows the pods and Services of one namespace through a
// watch, so that the bench learns when they exist without listing them over
// and over (which would load the API server the controllers share).
type objectWatch struct {
	mu sync.Mutex
	// seen holds when each name was first seen, per kind.
	seen map[string]map[string]time.Time
	// changed is closed, and replaced, whenever a name is added.
	changed chan struct{}
	// newPod, when set, is called with the name of each new pod.
	newPod func(name string)
}

// The kinds an objectWatch follows.
const (
	podKind     = "Pod"
	serviceKind = "Service"
)

// watchObjects starts following namespace's pods and Services (their
// metadata only) until ctx ends.
func watchObjects(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, namespace string) (*objectWatch, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{namespace: {}}})
	if err != nil {
		return nil, err
	}
	w := &objectWatch{seen: map[string]map[string]time.Time{}, changed: make(chan struct{})}
	for _, kind := range []string{podKind, serviceKind} {
		w.seen[kind] = map[string]time.Time{}
		inf, err := c.GetInformer(ctx, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kind}})
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			if o, ok := obj.(*metav1.PartialObjectMetadata); ok {
				w.add(kind, o.Name)
			}
		}}); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the watch of namespace %s did not sync", namespace)
	}
	return w, nil
}

// onNewPod has fn called with the name of each pod seen from now on; fn
// must not block, or it holds up the watch.
func (w *objectWatch) onNewPod(fn func(name string)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.newPod = fn
}

func (w *objectWatch) add(kind, name string) {
	now := time.Now()
	w.mu.Lock()
	if _, ok := w.seen[kind][name]; ok {
		w.mu.Unlock()
		return
	}
	w.seen[kind][name] = now
	close(w.changed)
	w.changed = make(chan struct{})
	newPod := w.newPod
	w.mu.Unlock()
	if kind == podKind && newPod != nil {
		newPod(name)
	}
}

// count returns the number of objects of kind seen.
func (w *objectWatch) count(kind string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen[kind])
}

// seenAt returns when the object of kind named name was first seen.
func (w *objectWatch) seenAt(kind, name string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.seen[kind][name]
	return t, ok
}

// lastSeen returns when the last of the objects of kind of names was
// first seen; zero unless each was.
func (w *objectWatch) lastSeen(kind string, names []string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, n := range names {
		t, ok := w.seen[kind][n]
		if !ok {
			return time.Time{}
		}
		if t.After(last) {
			last = t
		}
	}
	return last
}

// allOf reports whether an object of kind of each name was seen.
func (w *objectWatch) allOf(kind string, names []string) bool {
	return len(names) == 0 || !w.lastSeen(kind, names).IsZero()
}

// all reports whether a pod and a Service of each name were seen.
func (w *objectWatch) all(names []string) bool {
	return w.allOf(podKind, names) && w.allOf(serviceKind, names)
}

// waitFor waits until cond holds, the controller exits or timeout passes;
// what describes the wait in errors.
func (w *objectWatch) waitFor(ctx context.Context, proc *harness.Process, timeout time.Duration, what string, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		w.mu.Lock()
		changed := w.changed
		w.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-changed:
		case <-tick.C:
			if proc.Exited() {
				return fmt.Errorf("the controller exited while waiting for %s:\n%s", what, proc.Log())
			}
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s (%d pods, %d Services seen): %w; the controller's log ends:\n%s",
				what, w.count(podKind), w.count(serviceKind), ctx.Err(), proc.Log())
		}
	}
}
