//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/accelstack/accelstack/test/cluster"
)

// timeout bounds every wait of the tests: generous, these are no benchmarks.
const timeout = 3 * time.Minute

// testContext returns a context that ends with the test or after timeout.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}

// namespaceEvents returns the events of namespace ns that match the field
// selector (every event when it is empty), oldest first. Events of the
// events.k8s.io API have no lastTimestamp: they are ordered by creation.
func namespaceEvents(ns, selector string) string {
	args := []string{"-n", ns, "get", "events", "--sort-by=.metadata.creationTimestamp"}
	if selector != "" {
		args = append(args, "--field-selector", selector)
	}
	out, err := clus.Kubectl(context.Background(), args...)
	if err != nil {
		return fmt.Sprintf("(listing events: %v)", err)
	}
	return out
}

// newNamespace creates a namespace for the test and deletes it afterwards.
func newNamespace(t *testing.T) string {
	t.Helper()
	ctx := testContext(t)
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			// Warnings only, so that the failure above stays near the
			// end of a truncated log.
			t.Logf("warning events in %s:\n%s", ns.Name, namespaceEvents(ns.Name, "type=Warning"))
		}
		// Wait for the namespace to go: its pods may hold GPUs that the next
		// test counts on.
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting namespace %s: %v", ns.Name, err)
			return
		}
		err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			_, err := kube.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("namespace %s still there %s after its deletion: %v", ns.Name, timeout, err)
		}
	})
	// Pods are refused until the namespace's default ServiceAccount exists.
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("no default ServiceAccount in %s: %v", ns.Name, err)
	}
	return ns.Name
}

// shellPod is a busybox pod running script, with the given resource limits.
func shellPod(name, script string, limits map[string]int64) *corev1.Pod {
	rl := corev1.ResourceList{}
	for r, n := range limits {
		rl[corev1.ResourceName(r)] = *resource.NewQuantity(n, resource.DecimalSI)
	}
	grace := int64(1)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "main", Image: cluster.BusyboxImage, ImagePullPolicy: corev1.PullNever,
				Command:   []string{"sh", "-c", script},
				Resources: corev1.ResourceRequirements{Limits: rl},
			}},
		},
	}
}

// createPod creates pod in ns.
func createPod(t *testing.T, ns string, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	p, err := kube.CoreV1().Pods(ns).Create(testContext(t), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", pod.Name, err)
	}
	return p
}

// waitPod waits until done says the pod is where the test wants it.
func waitPod(t *testing.T, ns, name, what string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	var lastErr error
	err := wait.PollUntilContextCancel(testContext(t), 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		p, err := kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			lastErr = err
			return false, nil //nolint:nilerr // retried until the timeout
		}
		pod, lastErr = p, nil
		return done(p), nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s never %s; status: %+v; last error: %v", ns, name, what, podStatus(pod), lastErr)
	}
	return pod
}

func running(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && ready(p) }
func succeeded(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded
}
func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podStatus(p *corev1.Pod) string {
	if p == nil {
		return "(no pod)"
	}
	return fmt.Sprintf("phase=%s reason=%q message=%q containers=%+v", p.Status.Phase, p.Status.Reason, p.Status.Message, p.Status.ContainerStatuses)
}

// podLogs returns the logs of the pod's only container.
func podLogs(t *testing.T, ns, name string) string {
	t.Helper()
	rc, err := kube.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).Stream(testContext(t))
	if err != nil {
		t.Fatalf("logs of %s/%s: %v", ns, name, err)
	}
	defer rc.Close()
	var b bytes.Buffer
	if _, err := io.Copy(&b, rc); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// envValue finds NAME=value in output and returns value.
func envValue(output, name string) (string, bool) {
	for _, line := range strings.Split(output, "\n") {
		if v, ok := strings.CutPrefix(line, name+"="); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// allocatable returns the node's allocatable count of each extended resource.
func allocatable(ctx context.Context) (map[string]int64, error) {
	n, err := kube.CoreV1().Nodes().Get(ctx, cluster.NodeName, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for name, q := range n.Status.Allocatable {
		if strings.Contains(string(name), "/") {
			out[string(name)] = q.Value()
		}
	}
	return out, nil
}

// waitAllocatable waits until want holds for the node's allocatable
// extended resources and returns them.
func waitAllocatable(t *testing.T, what string, within time.Duration, want func(map[string]int64) bool) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var last map[string]int64
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		a, err := allocatable(ctx)
		if err != nil {
			lastErr = err
			return false, nil //nolint:nilerr // retried until the timeout
		}
		last, lastErr = a, nil
		return want(a), nil
	})
	if err != nil {
		t.Fatalf("node allocatable never %s within %s; last: %v; last error: %v", what, within, last, lastErr)
	}
	return last
}

// waitHeartbeatAfter waits until the node's Ready condition carries a
// heartbeat written after since and is True: the node status then comes from
// a kubelet started after since, not from the API server's stale copy.
func waitHeartbeatAfter(t *testing.T, since time.Time) {
	t.Helper()
	var last corev1.NodeCondition
	var lastErr error
	err := wait.PollUntilContextCancel(testContext(t), 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		n, err := kube.CoreV1().Nodes().Get(ctx, cluster.NodeName, metav1.GetOptions{})
		if err != nil {
			lastErr = err
			return false, nil //nolint:nilerr // retried until the timeout
		}
		lastErr = nil
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				last = c
				// Heartbeats have second resolution: compare with since
				// truncated to the second, plus one, to be strictly after.
				return c.Status == corev1.ConditionTrue && c.LastHeartbeatTime.After(since.Truncate(time.Second).Add(time.Second)), nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no Ready heartbeat from the node after %s; last Ready condition: %+v; last error: %v", since.Format(time.RFC3339), last, lastErr)
	}
}

// waitLogValue waits until the pod's log carries NAME=value and returns
// value: a Running pod may not have written its output yet.
func waitLogValue(t *testing.T, ns, pod, name string) string {
	t.Helper()
	var value, logs string
	err := wait.PollUntilContextCancel(testContext(t), 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		logs = podLogs(t, ns, pod)
		v, ok := envValue(logs, name)
		value = v
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s/%s never logged %s: %v; log:\n%s", ns, pod, name, err, logs)
	}
	return value
}
