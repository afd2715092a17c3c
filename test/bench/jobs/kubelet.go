package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kubeletParallel is how many pods the kubelet marks at a time.
const kubeletParallel = 16

// workerInfix is in the name of every worker pod, <job>-worker-<i>.
const workerInfix = "-worker-"

// kubelet plays the kubelet for worker pods: it marks each one Running and
// Ready as soon as the watch sees it, and records when it had.
type kubelet struct {
	cl    client.Client
	queue workqueue.TypedInterface[string]

	mu sync.Mutex
	// ready holds when each worker pod was marked Ready.
	ready map[string]time.Time
	errs  []error
}

// startKubelet starts marking the worker pods named to it by newPod, until
// ctx ends.
func startKubelet(ctx context.Context, cl client.Client) *kubelet {
	k := &kubelet{cl: cl, queue: workqueue.NewTyped[string](), ready: map[string]time.Time{}}
	for range kubeletParallel {
		go k.work(ctx)
	}
	go func() {
		<-ctx.Done()
		k.queue.ShutDown()
	}()
	return k
}

// newPod queues pod name if it is a worker's; it does not block.
func (k *kubelet) newPod(name string) {
	if strings.Contains(name, workerInfix) {
		k.queue.Add(name)
	}
}

func (k *kubelet) work(ctx context.Context) {
	for {
		name, shutdown := k.queue.Get()
		if shutdown {
			return
		}
		err := k.markReady(ctx, name)
		k.queue.Done(name)
		k.mu.Lock()
		if err != nil {
			if ctx.Err() == nil {
				k.errs = append(k.errs, fmt.Errorf("marking pod %s Ready: %w", name, err))
			}
		} else {
			k.ready[name] = time.Now()
		}
		k.mu.Unlock()
	}
}

// markReady sets pod name's status as the kubelet does once its containers
// run and pass their readiness probes.
func (k *kubelet) markReady(ctx context.Context, name string) error {
	now := metav1.Now()
	status := corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now}
	for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		status.Conditions = append(status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: name}}
	return k.cl.Status().Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch))
}

// readyAt returns when worker pod name was marked Ready.
func (k *kubelet) readyAt(name string) (time.Time, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t, ok := k.ready[name]
	return t, ok
}

// allReady reports whether every pod of names was marked Ready.
func (k *kubelet) allReady(names []string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, n := range names {
		if _, ok := k.ready[n]; !ok {
			return false
		}
	}
	return true
}

// err returns the errors of marking pods so far.
func (k *kubelet) err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return errors.Join(k.errs...)
}
