package reclaim

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelstack/accelstack/pkg/reclaim/reclaimtest"
)

func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// TestScrapeNodeAgent scrapes the real node agent on a simulated DGX A100
// in the Prometheus text format and finds each pod's GPU utilization by
// its pod and namespace labels.
func TestScrapeNodeAgent(t *testing.T) {
	na := reclaimtest.StartNodeAgent(t)
	na.Assign("research", "trainer-0", "notebook", 6, 7)
	na.Assign("research", "idle-0", "notebook", 5)
	na.SetUtilization(5, 0)
	na.SetUtilization(6, 3)
	na.SetUtilization(7, 80)
	na.Collect()

	m, err := scrapeNodeAgent(context.Background(), http.DefaultClient, "http://"+na.Addr())
	if err != nil {
		t.Fatal(err)
	}
	testCases := []struct {
		pod     *corev1.Pod
		want    float64
		wantErr string
	}{
		{pod: pod("research", "trainer-0"), want: 80},
		{pod: pod("research", "idle-0"), want: 0},
		{pod: pod("other", "trainer-0"), wantErr: "the node agent reports no device of the pod"},
	}
	for _, tc := range testCases {
		got, err := m.utilization(tc.pod)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("utilization(%s/%s) = %v, %v; want error %q", tc.pod.Namespace, tc.pod.Name, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("utilization(%s/%s) = %v, %v; want %v", tc.pod.Namespace, tc.pod.Name, got, err, tc.want)
		}
	}

	// The utilization follows the device.
	na.SetUtilization(7, 0)
	na.Collect()
	if m, err = scrapeNodeAgent(context.Background(), http.DefaultClient, "http://"+na.Addr()); err != nil {
		t.Fatal(err)
	}
	if got, err := m.utilization(pod("research", "trainer-0")); err != nil || got != 3 {
		t.Errorf("after GPU 7 went idle: utilization = %v, %v; want 3 (GPU 6)", got, err)
	}
}

func TestParseNodeMetrics(t *testing.T) {
	testCases := []struct {
		name    string
		text    string
		want    float64
		wantErr error
		wantMsg string
	}{
		{
			name: "MIG devices have memory but no utilization",
			text: `# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{gpu="0",GPU_I_ID="1",GPU_I_PROFILE="1g.5gb",namespace="ns",pod="p",container="c"} 1024
# TYPE accelstack_node_agent_podresources_up gauge
accelstack_node_agent_podresources_up 1
`,
			wantErr: errNotMeasured,
		},
		{
			name: "no pod attribution",
			text: `# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",namespace="",pod="",container=""} 90
# TYPE accelstack_node_agent_podresources_up gauge
accelstack_node_agent_podresources_up 0
`,
			wantMsg: "the node agent has no pod attribution (PodResources API down)",
		},
		{
			name: "a time-sliced GPU: one series per sharing pod, the pod's highest",
			text: `# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",namespace="ns",pod="p",container="c"} 12
DCGM_FI_DEV_GPU_UTIL{gpu="0",namespace="ns",pod="q",container="c"} 12
DCGM_FI_DEV_GPU_UTIL{gpu="1",namespace="ns",pod="p",container="c"} 40
`,
			want: 40,
		},
		{
			name: "an Ascend NPU",
			text: `# TYPE npu_chip_info_utilization gauge
npu_chip_info_utilization{id="0",namespace="ns",pod_name="p",container_name="c"} 55
`,
			want: 55,
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := parseNodeMetrics([]byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.utilization(pod("ns", "p"))
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("utilization = %v, %v; want %v", got, err, tc.wantErr)
				}
			case tc.wantMsg != "":
				if err == nil || err.Error() != tc.wantMsg {
					t.Errorf("utilization = %v, %v; want %q", got, err, tc.wantMsg)
				}
			case err != nil || got != tc.want:
				t.Errorf("utilization = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	if _, err := parseNodeMetrics([]byte("not {{ metrics")); err == nil || !strings.Contains(err.Error(), "parsing") {
		t.Errorf("parseNodeMetrics(garbage) = %v, want a parse error", err)
	}
}

// TestGPUWatch: the Keeper says how long a GPU was below the threshold only
// of the time it watched, and a gap in its readings starts over.
func TestGPUWatch(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	const threshold, maxGap = 5.0, 3 * time.Minute
	type step struct {
		at   time.Duration
		util float64
		want Evidence
	}
	ev := func(active bool, util, windowMax float64, since, last time.Duration, zeroLast bool) Evidence {
		e := Evidence{Source: SourceGPU, Required: true, Active: active, Utilization: util, WindowMax: windowMax,
			Threshold: threshold, Since: t0.Add(since), Last: t0.Add(last)}
		if zeroLast {
			e.Last = time.Time{}
		}
		return e
	}
	steps := []step{
		{at: 0, util: 0, want: ev(false, 0, 0, 0, 0, true)},
		{at: time.Minute, util: 3, want: ev(false, 3, 3, 0, 0, true)},
		{at: 2 * time.Minute, util: 50, want: ev(true, 50, 0, 0, 2*time.Minute, false)},
		{at: 3 * time.Minute, util: 1, want: ev(false, 1, 1, 0, 2*time.Minute, false)},
		{at: 4 * time.Minute, util: 5, want: ev(false, 5, 5, 0, 2*time.Minute, false)},
		// Ten minutes without a reading: what the GPU did then is unknown.
		{at: 14 * time.Minute, util: 0, want: ev(false, 0, 0, 14*time.Minute, 2*time.Minute, false)},
	}
	var w gpuWatch
	for _, s := range steps {
		got := w.observe(t0.Add(s.at), s.util, threshold, maxGap)
		if diff := cmp.Diff(s.want, got, cmpopts.EquateErrors()); diff != "" {
			t.Errorf("at %s (-want +got):\n%s", s.at, diff)
		}
	}
}

func TestHoldsAccelerators(t *testing.T) {
	withResource := func(name string, q string) *corev1.Pod {
		p := pod("ns", "p")
		p.Spec.Containers = []corev1.Container{{Name: "activity"}, {Name: "notebook", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceName(name): resource.MustParse(q)},
		}}}
		return p
	}
	for _, tc := range []struct {
		pod  *corev1.Pod
		want bool
	}{
		{pod: withResource("nvidia.com/gpu", "1"), want: true},
		{pod: withResource("nvidia.com/gpu.shared", "1"), want: true},
		{pod: withResource("nvidia.com/mig-1g.5gb", "1"), want: true},
		{pod: withResource("huawei.com/Ascend910", "2"), want: true},
		{pod: withResource("nvidia.com/gpu", "0"), want: false},
		{pod: withResource("cpu", "4"), want: false},
		{pod: withResource("amd.com/gpu", "1"), want: false},
	} {
		var name string
		for n := range tc.pod.Spec.Containers[1].Resources.Limits {
			name = string(n)
		}
		if got := holdsAccelerators(tc.pod); got != tc.want {
			t.Errorf("holdsAccelerators(%s) = %v, want %v", name, got, tc.want)
		}
	}
}
