//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/notebook"
	"github.com/accelstack/accelstack/pkg/reclaim"
	"github.com/accelstack/accelstack/pkg/simcontrol"
)

// nodeAgentSocket is the control socket of the node agent's simulated
// machine on the host (test/cluster/manifests/node-agent.yaml): the GPU
// utilization the agent reports, and the Keeper reads, is set there.
const nodeAgentSocket = "/run/accelstack/node-agent-simulator.sock"

// TestNotebookGPUBusyNotReclaimed runs a Notebook with one simulated GPU,
// makes the node agent read that GPU at 90%, and only then opts its
// namespace in to the Resource Keeper: no request, kernel or SSH session
// keeps it active, yet it is not Idle past idle-after since the opt-in,
// the Keeper naming the GPU. Set to 0%, the GPU lets it go Idle after
// idle-after and be suspended after suspend-after. Opting in last keeps a
// slow start (a loaded node can take more than idle-after to get Jupyter
// Ready) from reclaiming the notebook before its GPU is busy.
func TestNotebookGPUBusyNotReclaimed(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), nbTimeout)
	t.Cleanup(cancel)
	c := crClient(t)
	ns := newNamespace(t)

	spec := jupyterPodSpec()
	spec.Containers[0].Resources.Limits = corev1.ResourceList{gpu: *resource.NewQuantity(1, resource.DecimalSI)}
	nb := &tensorstackv1beta1.Notebook{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: ns},
		Spec:       tensorstackv1beta1.NotebookSpec{Template: tensorstackv1beta1.NotebookTemplateSpec{Spec: spec}},
	}
	if err := c.Create(ctx, nb); err != nil {
		t.Fatal(err)
	}
	nb = waitNotebook(ctx, t, c, nb, "Ready", notebookReady)
	podName := notebook.PodName(notebook.ObjectName(nb.UID))
	// The pod's GPU, as the node agent attributes it, and its reading now,
	// which the test puts back when it ends.
	uuid, was := podGPU(ctx, t, ns, podName)
	t.Cleanup(func() {
		if err := simcontrol.Send(nodeAgentSocket, "util "+uuid+" "+was); err != nil {
			t.Errorf("putting GPU %s back at %s%%: %v", uuid, was, err)
		}
	})
	if err := simcontrol.Send(nodeAgentSocket, "util "+uuid+" 90"); err != nil {
		t.Fatal(err)
	}
	optInResourceKeeper(t, ns, nbIdleAfter, nbSuspendAfter)
	optedIn := time.Now()
	t.Logf("notebook Ready, pod %s on GPU %s (was %s%%), now at 90%%; namespace opted in", podName, uuid, was)

	// Active well past idle-after since the opt-in, every other source
	// quiet since the pod's start; the Keeper's last word, past idle-after,
	// names the GPU and nothing else active.
	last := ""
	for until := optedIn.Add(nbIdleAfter + 30*time.Second); time.Now().Before(until) || last == ""; time.Sleep(2 * time.Second) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(nb), nb); err != nil {
			t.Fatal(err)
		}
		idle := idleCondition(nb)
		if idle == nil {
			continue
		}
		if idle.Status == corev1.ConditionTrue || nb.Spec.Suspend {
			t.Fatalf("Idle %s %s after the opt-in while its GPU is at 90%%: %s", idle.Reason, round(time.Since(optedIn)), idle.Message)
		}
		last = fmt.Sprintf("%s %s: %s", idle.Status, idle.Reason, idle.Message)
	}
	if !strings.Contains(last, "GPU 90% (above") || strings.Contains(last, "last request") || strings.Contains(last, "busy") {
		t.Fatalf("%s after the opt-in the Keeper does not say the GPU alone is active: %s", round(time.Since(optedIn)), last)
	}
	t.Logf("not Idle %s after the opt-in: %s", round(time.Since(optedIn)), last)

	// Idle once the GPU has been at 0% for idle-after, then suspended.
	if err := simcontrol.Send(nodeAgentSocket, "util "+uuid+" 0"); err != nil {
		t.Fatal(err)
	}
	quiet := time.Now()
	nb = waitNotebook(ctx, t, c, nb, "Idle", func(nb *tensorstackv1beta1.Notebook) bool {
		idle := idleCondition(nb)
		return idle != nil && idle.Status == corev1.ConditionTrue
	})
	idle := idleCondition(nb)
	t.Logf("Idle %s after the GPU went to 0%%: %s", round(time.Since(quiet)), idle.Message)
	if since := time.Since(quiet); since < nbIdleAfter-10*time.Second {
		t.Errorf("Idle %s after the GPU went quiet, before idle-after (%s)", round(since), nbIdleAfter)
	}
	if !strings.Contains(idle.Message, "GPU at most 0%") {
		t.Errorf("the Idle message does not name the quiet GPU: %s", idle.Message)
	}
	nb = waitNotebook(ctx, t, c, nb, "suspended", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Spec.Suspend && nb.Status.Phase == tensorstackv1beta1.NotebookSuspended
	})
	if idle := idleCondition(nb); idle == nil || idle.Reason != reclaim.ReasonSuspended {
		t.Errorf("Idle condition of the suspended notebook: %+v", idle)
	}
	waitNotebookPodGone(ctx, t, nb)
}

// gpuUtilSeries matches a DCGM_FI_DEV_GPU_UTIL sample, capturing its
// labels and value.
var gpuUtilSeries = regexp.MustCompile(`(?m)^DCGM_FI_DEV_GPU_UTIL\{([^}]*)\} (\S+)$`)

// podGPU waits until the node agent attributes one GPU to the pod and
// returns its UUID and utilization reading.
func podGPU(ctx context.Context, t *testing.T, ns, pod string) (uuid, util string) {
	t.Helper()
	url := nodeAgentURL(t)
	uuidLabel := regexp.MustCompile(`UUID="([^"]+)"`)
	var metrics string
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		if metrics, lastErr = get(ctx, url); lastErr != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		var found []string
		for _, m := range gpuUtilSeries.FindAllStringSubmatch(metrics, -1) {
			if strings.Contains(m[1], `namespace="`+ns+`"`) && strings.Contains(m[1], `pod="`+pod+`"`) {
				if u := uuidLabel.FindStringSubmatch(m[1]); u != nil {
					found = append(found, u[1])
					uuid, util = u[1], m[2]
				}
			}
		}
		if len(found) > 1 {
			return false, fmt.Errorf("GPUs %v attributed to a pod of one GPU", found)
		}
		return len(found) == 1, nil
	})
	if err != nil {
		t.Fatalf("no GPU attributed to %s/%s: %v (last error %v); series:\n%s", ns, pod, err, lastErr, grepLines(metrics, "DCGM_FI_DEV_GPU_UTIL"))
	}
	return uuid, util
}
