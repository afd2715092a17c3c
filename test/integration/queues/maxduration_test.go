package queues

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/queues"
	"github.com/accelstack/accelstack/test/testutil"
)

// testMaxDuration: pods of a queue with maxDuration are deleted once that
// old, each with an event naming the queue and the duration; a pod created
// later is deleted at its own time, with nothing else happening meanwhile.
func testMaxDuration(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	q := e.queue(ctx, t, "short", func(s *schedv1beta1.QueueSpec) { s.MaxDuration = ptr.To("4s") })
	labels := map[string]string{schedv1beta1.QueueLabel: q.Name}
	first := e.createPod(ctx, t, podSpec(ns, "first", "1", labels))
	e.bind(ctx, t, first, "node-1")
	e.setPhase(ctx, t, first, corev1.PodRunning)
	time.Sleep(2 * time.Second)
	second := e.createPod(ctx, t, podSpec(ns, "second", "1", labels))
	if second.CreationTimestamp.IsZero() {
		t.Fatal("the created pod has no creationTimestamp to measure its age from")
	}

	gone := func(p *corev1.Pod) (bool, string, error) {
		got := &corev1.Pod{}
		err := e.c.Get(ctx, client.ObjectKeyFromObject(p), got)
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		// A pod bound to a node waits for its kubelet to confirm.
		return err == nil && got.DeletionTimestamp != nil, "still there", err
	}
	testutil.Poll(ctx, t, "first pod deleted", func() (bool, string, error) { return gone(first) })
	if ok, _, _ := gone(second); ok {
		t.Errorf("the second pod was deleted before its maxDuration")
	}
	e.waitEvent(ctx, t, ns, "first", queues.EventMaxDuration, `queue "`+q.Name+`"`, "maxDuration 4s")
	testutil.Poll(ctx, t, "second pod deleted", func() (bool, string, error) { return gone(second) })
	// The age counts from creationTimestamp, which the API server keeps in
	// whole seconds: up to a second before the Create returned.
	if d := time.Since(second.CreationTimestamp.Time); d < 4*time.Second {
		t.Errorf("the second pod was deleted %v after its creationTimestamp, before its maxDuration 4s", d)
	}
	e.waitEvent(ctx, t, ns, "second", queues.EventMaxDuration, q.Name)
}
