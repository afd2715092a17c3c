//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/accelstack/accelstack/test/cluster"
)

// TestNodeAgentAttributesGPUsToPods checks that the node agent's series
// for the GPUs a pod got carry the pod's name, namespace and container,
// read from the real kubelet's PodResources API.
func TestNodeAgentAttributesGPUsToPods(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, shellPod("attributed", "env; sleep 3600", map[string]int64{gpu: 2}))
	waitPod(t, ns, "attributed", "Running", running)
	devs := waitLogValue(t, ns, "attributed", "NVIDIA_VISIBLE_DEVICES")
	url := nodeAgentURL(t)
	want := `container="main"`
	var metrics string
	var lastErr error
	err := wait.PollUntilContextCancel(testContext(t), 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		m, err := get(ctx, url)
		if err != nil {
			lastErr = err
			return false, nil //nolint:nilerr // retried until the timeout
		}
		metrics = m
		for _, uuid := range strings.Split(devs, ",") {
			if !hasSeries(m, "DCGM_FI_DEV_GPU_UTIL", `UUID="`+uuid+`"`, want, `namespace="`+ns+`"`, `pod="attributed"`) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("no DCGM_FI_DEV_GPU_UTIL series for GPUs %s attributed to %s/attributed; metrics:\n%s; last API error: %v", devs, ns, grepLines(metrics, "DCGM_FI_DEV_GPU_UTIL"), lastErr)
	}
}

// hasSeries reports whether metrics has a sample of name whose labels
// contain every one of labels.
func hasSeries(metrics, name string, labels ...string) bool {
	for _, line := range strings.Split(metrics, "\n") {
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		all := true
		for _, l := range labels {
			all = all && strings.Contains(line, l)
		}
		if all {
			return true
		}
	}
	return false
}

func grepLines(s, match string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, match) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// nodeAgentURL is the metrics URL of the node agent's pod.
func nodeAgentURL(t *testing.T) string {
	t.Helper()
	pods, err := kube.CoreV1().Pods(cluster.Namespace).List(testContext(t), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=node-agent"})
	if err != nil || len(pods.Items) == 0 || pods.Items[0].Status.PodIP == "" {
		t.Fatalf("no node agent pod with an IP: %v", err)
	}
	return "http://" + pods.Items[0].Status.PodIP + ":9400/metrics"
}

func get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}
