package scheduler

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

// testQuota: a queue with quota cpu 4 binds two 2-cpu pods and holds the
// third back, naming the quota, until one of the two goes.
func testQuota(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("quota")
	e.node(t, pool, 16, nil, nil)
	q := e.queue(t, pool, func(s *schedv1beta1.QueueSpec) {
		s.Quota = &schedv1beta1.Quota{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}
	})
	ns := e.namespace(t, nil)
	e.pod(t, ns, "a", "2", queueLabel(q))
	e.pod(t, ns, "b", "2", queueLabel(q))
	e.waitBound(ctx, t, ns, "a", "b")
	e.pod(t, ns, "c", "2", queueLabel(q))
	e.waitUnschedulable(ctx, t, ns, "c", "would exceed its quota 4")
	if err := e.c.Delete(ctx, e.get(ctx, t, ns, "a")); err != nil {
		t.Fatal(err)
	}
	e.waitBound(ctx, t, ns, "c")
}

// testExtendedQuota: quota on an accelerator resource (whole GPUs, MIG
// slices, Ascend NPUs) counts the pods' requests of it, including requests
// given only as limits, and a finished pod frees its share.
func testExtendedQuota(t *testing.T, e *env) {
	for _, res := range []corev1.ResourceName{"nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "huawei.com/Ascend910"} {
		t.Run(string(res), func(t *testing.T) {
			t.Parallel()
			testAcceleratorQuota(t, e, res)
		})
	}
}

func testAcceleratorQuota(t *testing.T, e *env, res corev1.ResourceName) {
	ctx := testutil.SubtestContext(t)
	pool := unique("accel")
	e.node(t, pool, 64, nil, corev1.ResourceList{res: resource.MustParse("8")})
	q := e.queue(t, pool, func(s *schedv1beta1.QueueSpec) {
		s.Quota = &schedv1beta1.Quota{Requests: corev1.ResourceList{res: resource.MustParse("4")}}
	})
	ns := e.namespace(t, nil)
	accelPod := func(name string) {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: queueLabel(q)},
			Spec: corev1.PodSpec{
				SchedulerName:                 schedv1beta1.SchedulerName,
				TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers: []corev1.Container{{Name: "c", Image: "pause", Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{res: resource.MustParse("3")},
				}}},
			},
		}
		if err := e.c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	accelPod("train-0")
	e.waitBound(ctx, t, ns, "train-0")
	accelPod("train-1")
	e.waitUnschedulable(ctx, t, ns, "train-1", string(res)+" requests 3 would exceed its quota 4")
	done := e.get(ctx, t, ns, "train-0")
	done.Status.Phase = corev1.PodSucceeded
	if err := e.c.Status().Update(ctx, done); err != nil {
		t.Fatal(err)
	}
	e.waitBound(ctx, t, ns, "train-1")
}

// testClosed: a closed queue binds nothing, saying so, until it is opened.
func testClosed(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("closed")
	e.node(t, pool, 4, nil, nil)
	q := e.queue(t, pool, func(s *schedv1beta1.QueueSpec) { s.Closed = true })
	ns := e.namespace(t, nil)
	e.pod(t, ns, "p", "1", queueLabel(q))
	e.waitUnschedulable(ctx, t, ns, "p", "is closed")
	patchQueue(ctx, t, e, q, func(s *schedv1beta1.QueueSpec) { s.Closed = false })
	e.waitBound(ctx, t, ns, "p")
}

// testMissingQueue: a pod of a queue that does not exist waits, saying so,
// and is bound once the queue is created.
func testMissingQueue(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("missing")
	e.node(t, pool, 4, nil, nil)
	ns := e.namespace(t, nil)
	name := unique("later")
	e.pod(t, ns, "p", "1", queueLabel(name))
	e.waitUnschedulable(ctx, t, ns, "p", "does not exist")
	q := &schedv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedv1beta1.QueueSpec{
		NodeSelector: &metav1.LabelSelector{MatchLabels: map[string]string{poolLabel: pool}}, NamespaceSelector: &metav1.LabelSelector{},
	}}
	if err := e.c.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
	e.waitBound(ctx, t, ns, "p")
}

// testNamespaceSelector: only namespaces matching the queue's
// namespaceSelector may use it; labelling the namespace lets the pod in.
func testNamespaceSelector(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("ns")
	e.node(t, pool, 4, nil, nil)
	q := e.queue(t, pool, func(s *schedv1beta1.QueueSpec) {
		s.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "vision"}}
	})
	ns := e.namespace(t, nil)
	e.pod(t, ns, "p", "1", queueLabel(q))
	e.waitUnschedulable(ctx, t, ns, "p", "does not match its namespaceSelector")
	n := &corev1.Namespace{}
	if err := e.c.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
		t.Fatal(err)
	}
	n.Labels = map[string]string{"team": "vision"}
	if err := e.c.Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	e.waitBound(ctx, t, ns, "p")
}

// testNodeSelector: a queue's pods land only on the nodes of its
// nodeSelector.
func testNodeSelector(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("zones")
	e.node(t, pool, 64, map[string]string{"topology.kubernetes.io/zone": "peking"}, nil)
	tianjin := e.node(t, pool, 64, map[string]string{"topology.kubernetes.io/zone": "tianjin"}, nil)
	q := e.queue(t, pool, func(s *schedv1beta1.QueueSpec) {
		s.NodeSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{
			Key: "topology.kubernetes.io/zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"tianjin"},
		}}
	})
	ns := e.namespace(t, nil)
	names := []string{"p-0", "p-1", "p-2", "p-3"}
	for _, n := range names {
		e.pod(t, ns, n, "1", queueLabel(q))
	}
	for pod, node := range e.waitBound(ctx, t, ns, names...) {
		if node != tianjin.Name {
			t.Errorf("pod %s on %s, want %s (the queue's nodeSelector)", pod, node, tianjin.Name)
		}
	}
}

// testShapes: a pod larger than every shape of its queue's profile is
// refused; one within a shape is bound.
func testShapes(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("shapes")
	e.node(t, pool, 16, nil, nil)
	profile := unique("small")
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: schedv1beta1.ShapesNamespace, Name: schedv1beta1.ShapesConfigMap},
		Data:       map[string]string{profile: "- {cpu: \"1\", memory: 2Gi}\n- {cpu: \"2\", memory: 1Gi}\n"},
	}
	if err := e.c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	q := e.queue(t, pool, func(s *schedv1beta1.QueueSpec) { s.ResourceShapeProfile = ptr.To(profile) })
	ns := e.namespace(t, nil)
	e.pod(t, ns, "big", "3", queueLabel(q))
	e.waitUnschedulable(ctx, t, ns, "big", "larger than every shape")
	e.pod(t, ns, "fits", "2", queueLabel(q))
	e.waitBound(ctx, t, ns, "fits")
}

func patchQueue(ctx context.Context, t *testing.T, e *env, name string, mutate func(*schedv1beta1.QueueSpec)) {
	t.Helper()
	// The queue's status is written meanwhile: retry on a conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		q := &schedv1beta1.Queue{}
		if err := e.c.Get(ctx, client.ObjectKey{Name: name}, q); err != nil {
			return err
		}
		mutate(&q.Spec)
		return e.c.Update(ctx, q)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testGrantedPod: a pod marked with its queue's grant is placed in a
// namespace the queue's namespaceSelector does not match; a mark of
// another queue does not stand in for it.
func testGrantedPod(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	pool := unique("grant")
	e.node(t, pool, 4, nil, nil)
	q := e.queue(t, pool, func(s *schedv1beta1.QueueSpec) {
		s.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "vision"}}
	})
	ns := e.namespace(t, nil)
	for name, grant := range map[string]string{"granted": q, "other": q + "-other"} {
		p := e.podSpec(ns, name, "1", queueLabel(q))
		p.Annotations = map[string]string{schedv1beta1.QueueGrantAnnotation: grant}
		if err := e.c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	e.waitBound(ctx, t, ns, "granted")
	e.waitUnschedulable(ctx, t, ns, "other", "does not match its namespaceSelector")
}
