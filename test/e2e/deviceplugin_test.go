//go:build e2e

package e2e

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelstack/accelstack/pkg/simcontrol"
	"github.com/accelstack/accelstack/test/cluster"
)

const (
	gpu       = "nvidia.com/gpu"
	gpuShared = "nvidia.com/gpu.shared"
	ascend910 = "huawei.com/Ascend910"
	// simulatorSocket is the NVIDIA simulator's control socket on the host
	// (test/cluster/manifests/device-plugin.yaml).
	simulatorSocket = "/run/accelstack/nvidia-simulator.sock"
)

// demoMachine is the allocatable of test/cluster/manifests: a DGX A100 with
// GPUs 6 and 7 time-sliced 4 ways, and eight Ascend 910 chips.
func demoMachine(a map[string]int64) bool {
	return a[gpu] == 6 && a[gpuShared] == 8 && a[ascend910] == 8
}

func TestAllocatable(t *testing.T) {
	a := waitAllocatable(t, "shows the simulated DGX A100 and Ascend server", time.Minute, demoMachine)
	t.Logf("allocatable: %v", a)
}

// TestPluginConfigurations rolls the NVIDIA plugin's DaemonSet to other
// configurations, as an admin would, and checks what the kubelet then
// advertises.
func TestPluginConfigurations(t *testing.T) {
	restore := pluginEnv(t)
	t.Cleanup(func() {
		setPluginEnv(t, restore)
		waitAllocatable(t, "back to the demo machine", 2*time.Minute, demoMachine)
	})
	tests := []struct {
		name string
		env  map[string]string
		want map[string]int64
	}{
		{
			name: "no time-slicing: eight whole GPUs",
			env:  map[string]string{"CONFIG_FILE": ""},
			want: map[string]int64{gpu: 8, gpuShared: 0},
		},
		{
			name: "MIG mixed: six GPUs sliced, two whole",
			env:  map[string]string{"CONFIG_FILE": "", "SIMULATE": "dgxa100-mig-mixed", "MIG_STRATEGY": "mixed"},
			want: map[string]int64{gpu: 2, "nvidia.com/mig-1g.5gb": 13, "nvidia.com/mig-2g.10gb": 8, "nvidia.com/mig-3g.20gb": 4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range restore {
				env[k] = v
			}
			for k, v := range tt.env {
				env[k] = v
			}
			setPluginEnv(t, env)
			waitAllocatable(t, "match "+tt.name, 2*time.Minute, func(a map[string]int64) bool {
				for r, n := range tt.want {
					if a[r] != n {
						return false
					}
				}
				return true
			})
		})
	}
}

func TestPodGetsTwoGPUs(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, shellPod("two-gpus", "env", map[string]int64{gpu: 2}))
	waitPod(t, ns, "two-gpus", "Succeeded", succeeded)
	devs, ok := envValue(podLogs(t, ns, "two-gpus"), "NVIDIA_VISIBLE_DEVICES")
	if !ok {
		t.Fatal("the pod has no NVIDIA_VISIBLE_DEVICES")
	}
	ids := strings.Split(devs, ",")
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("NVIDIA_VISIBLE_DEVICES = %q, want two distinct GPUs", devs)
	}
	for _, id := range ids {
		if !strings.HasPrefix(id, "GPU-") {
			t.Errorf("device %q is not a GPU UUID", id)
		}
	}
}

func TestTimeSlicedGPU(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, shellPod("one-share", "env", map[string]int64{gpuShared: 1}))
	createPod(t, ns, shellPod("two-shares", "env", map[string]int64{gpuShared: 2}))

	waitPod(t, ns, "one-share", "Succeeded", succeeded)
	devs, _ := envValue(podLogs(t, ns, "one-share"), "NVIDIA_VISIBLE_DEVICES")
	if !strings.HasPrefix(devs, "GPU-") || strings.Contains(devs, ",") {
		t.Errorf("one replica: NVIDIA_VISIBLE_DEVICES = %q, want one GPU UUID", devs)
	}

	// failRequestsGreaterThanOne: the kubelet's Allocate call fails and the
	// pod is rejected at admission with the plugin's message.
	p := waitPod(t, ns, "two-shares", "Failed", finished)
	if p.Status.Phase != corev1.PodFailed || p.Status.Reason != "UnexpectedAdmissionError" {
		t.Fatalf("two replicas: %s, want Failed with UnexpectedAdmissionError", podStatus(p))
	}
	if !strings.Contains(p.Status.Message, "failRequestsGreaterThanOne allows at most 1 replica per container") {
		t.Errorf("two replicas: message %q does not carry the plugin's reason", p.Status.Message)
	}
}

func TestKubeletRestartKeepsPodsAndResources(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, shellPod("long", "env; sleep 3600", map[string]int64{gpu: 1}))
	before := waitPod(t, ns, "long", "Running", running)
	alloc := waitAllocatable(t, "shows the demo machine", time.Minute, demoMachine)

	restarted := time.Now()
	if err := clus.RestartKubelet(testContext(t)); err != nil {
		t.Fatal(err)
	}
	// The node object still holds what the old kubelet wrote: wait for the
	// new kubelet's own heartbeat before reading anything from it.
	waitHeartbeatAfter(t, restarted)
	// The restarted kubelet admits GPU pods only through the re-registered
	// plugin.
	createPod(t, ns, shellPod("after", "env", map[string]int64{gpu: 1}))
	waitPod(t, ns, "after", "Succeeded", succeeded)
	waitAllocatable(t, "comes back after the kubelet restart", time.Minute, func(a map[string]int64) bool {
		return a[gpu] == alloc[gpu] && a[gpuShared] == alloc[gpuShared] && a[ascend910] == alloc[ascend910]
	})
	// By now the new kubelet has synced the pod's status at least once.
	after := waitPod(t, ns, "long", "Running", running)
	b, a := before.Status.ContainerStatuses[0], after.Status.ContainerStatuses[0]
	if a.ContainerID != b.ContainerID || a.RestartCount != 0 {
		t.Errorf("the pod's container changed across the kubelet restart: %s (restarts %d), was %s", a.ContainerID, a.RestartCount, b.ContainerID)
	}
}

func TestXIDMarksGPUUnhealthyAndRecovers(t *testing.T) {
	waitAllocatable(t, "shows the demo machine", time.Minute, demoMachine)
	start := time.Now()
	// XID 79 (fallen off the bus) on whole GPU 2.
	if err := simcontrol.Send(simulatorSocket, "xid 2 79"); err != nil {
		t.Fatal(err)
	}
	waitAllocatable(t, "drops by one after the XID", time.Minute, func(a map[string]int64) bool { return a[gpu] == 5 })
	t.Logf("XID to allocatable %s=5 on the node: %s", gpu, time.Since(start).Round(10*time.Millisecond))
	// HEALTH_QUIET_PERIOD is 30s in the manifests: no further XID, a passing
	// NVML check, and the GPU is healthy again; the kubelet reports it with
	// its next node status.
	waitAllocatable(t, "recovers", 2*time.Minute, demoMachine)
	healed := time.Since(start)
	t.Logf("XID to recovery to %s=6 on the node: %s", gpu, healed.Round(10*time.Millisecond))
	// The GPU must stay out for the whole quiet period: a heal before it
	// would mean the quiet period is not applied.
	if quiet := 30 * time.Second; healed < quiet {
		t.Errorf("the GPU came back %s after the XID, before the %s quiet period ended", healed.Round(time.Millisecond), quiet)
	}
}

// pluginEnv returns the environment of the NVIDIA plugin's container.
func pluginEnv(t *testing.T) map[string]string {
	t.Helper()
	ds := pluginDaemonSet(t)
	env := map[string]string{}
	for _, e := range ds.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	return env
}

// setPluginEnv sets the plain environment variables of the NVIDIA plugin's
// container and waits for the DaemonSet to roll out.
func setPluginEnv(t *testing.T, env map[string]string) {
	t.Helper()
	ctx := testContext(t)
	ds := pluginDaemonSet(t)
	c := &ds.Spec.Template.Spec.Containers[0]
	kept := c.Env[:0]
	for _, e := range c.Env {
		if _, ok := env[e.Name]; !ok || e.ValueFrom != nil {
			kept = append(kept, e)
		}
	}
	c.Env = kept
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: env[k]})
	}
	if _, err := kube.AppsV1().DaemonSets(cluster.Namespace).Update(ctx, ds, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := clus.Kubectl(ctx, "-n", cluster.Namespace, "rollout", "status", "daemonset/device-plugin", "--timeout=120s"); err != nil {
		t.Fatal(err)
	}
}

func pluginDaemonSet(t *testing.T) *appsv1.DaemonSet {
	t.Helper()
	ds, err := kube.AppsV1().DaemonSets(cluster.Namespace).Get(context.Background(), "device-plugin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}
