package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/ascend"
	"github.com/accelstack/accelstack/pkg/ascend/annotation"
	"github.com/accelstack/accelstack/pkg/ascend/plugin"
	"github.com/accelstack/accelstack/pkg/ascend/simulator"
	"github.com/accelstack/accelstack/pkg/ascend/volcano"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
	"github.com/accelstack/accelstack/pkg/nodeclient"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/kubelet"
	"github.com/accelstack/accelstack/test/plugintest"
)

const ascendNode = "npu-node-1"

// ascendKube is the plugin's own REST client of the core/v1 API.
func ascendKube(t *testing.T, cfg *rest.Config) *nodeclient.Client {
	t.Helper()
	c, err := nodeclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startAscendVolcano runs the Ascend vendor in Volcano mode on a simulated
// 910B node against a real API server, behind the fake kubelet.
func startAscendVolcano(t *testing.T, cfg *rest.Config, cs kubernetes.Interface) (*kubelet.Plugin, *plugin.Vendor) {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ascendNode}}
	node, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.1.2.3"}}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	o := plugin.DefaultOptions()
	o.Backend, o.Simulate = accelerator.BackendSimulated, simulator.ProfileAscend910B8
	o.Picker, err = volcano.New(volcano.Options{NodeName: ascendNode, Client: ascendKube(t, cfg), Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	v, err := plugin.NewVendor(o)
	if err != nil {
		t.Fatal(err)
	}
	k := plugintest.Start(t, deviceplugin.Config{Vendor: accelerator.VendorAscend, Backend: o.Backend, FailOnInitError: true}, v, nil).Kubelet
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	p, err := k.WaitPlugin(wctx, accelerator.Ascend910)
	if err != nil {
		t.Fatal(err)
	}
	return p, v
}

// volcanoPod is a pod Volcano placed on ascendNode with chips, asking for
// as many chips in its limits.
func volcanoPod(name, chips, predicateTime string) *corev1.Pod {
	n := int64(len(strings.Split(chips, ",")))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{
			accelerator.Ascend910: chips, volcano.AnnotationPredicateTimeKey: predicateTime}},
		Spec: corev1.PodSpec{NodeName: ascendNode, SchedulerName: "volcano", Containers: []corev1.Container{{
			Name: "c", Image: "mindspore", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				accelerator.Ascend910: *resource.NewQuantity(n, resource.DecimalSI)}}}}},
	}
}

// TestAscendVolcanoMode checks the Volcano annotation protocol end to end
// against a real API server: Allocate ignores the kubelet's IDs, takes the
// oldest pending pod's annotated chips and writes back AscendReal and the
// rank-table entry; bad annotations and missing pods are refused with
// nothing written.
func TestAscendVolcanoMode(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	p, v := startAscendVolcano(t, cp.Config, cs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	create := func(pod *corev1.Pod) {
		t.Helper()
		if _, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	annotations := func(name string) map[string]string {
		t.Helper()
		pod, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return pod.Annotations
	}

	// Two pods asking for two chips: the older is served first.
	create(volcanoPod("worker-0", "Ascend910-0,Ascend910-3", "1000"))
	create(volcanoPod("worker-1", "Ascend910-4,Ascend910-5", "2000"))
	// A one-chip marker pod created last: once it is served, the informer
	// cache holds both workers (watch events arrive in order).
	create(volcanoPod("marker", "Ascend910-7", "9000"))
	for {
		_, err := p.Allocate(ctx, []string{"Ascend910-1"})
		if err == nil {
			break
		}
		if status.Code(err) != codes.NotFound {
			t.Fatalf("Allocate of the marker pod: %v", err)
		}
	}
	resp, err := p.Allocate(ctx, []string{"Ascend910-6", "Ascend910-7"})
	if err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"ASCEND_VISIBLE_DEVICES": "0,3"}, resp.ContainerResponses[0].Envs); diff != "" {
		t.Errorf("envs (-want +got):\n%s", diff)
	}
	ann := annotations("worker-0")
	if got := ann[volcano.AnnotationRealKey]; got != "Ascend910-0,Ascend910-3" {
		t.Errorf("%s = %q", volcano.AnnotationRealKey, got)
	}
	var conf annotation.PodConfiguration
	if err := json.Unmarshal([]byte(ann[annotation.ConfigurationKey]), &conf); err != nil {
		t.Fatalf("configuration annotation %q: %v", ann[annotation.ConfigurationKey], err)
	}
	wantConf := annotation.PodConfiguration{PodName: "worker-0", ServerID: "10.1.2.3", Devices: []annotation.DeviceConfig{
		{DeviceID: "0", DeviceIP: "192.168.100.101"}, {DeviceID: "3", DeviceIP: "192.168.100.104"}}}
	if diff := cmp.Diff(wantConf, conf); diff != "" {
		t.Errorf("configuration (-want +got):\n%s", diff)
	}
	// The next Allocate serves the other pod, even before the cache shows worker-0 done.
	resp, err = p.Allocate(ctx, []string{"Ascend910-0", "Ascend910-1"})
	if err != nil {
		t.Fatalf("second Allocate: %v", err)
	}
	if got := resp.ContainerResponses[0].Envs["ASCEND_VISIBLE_DEVICES"]; got != "4,5" {
		t.Errorf("second pod got %q, want 4,5", got)
	}

	// A tenant's pod naming chip 0, which worker-0 holds, and claiming to
	// be first (predicate-time 0) is never served: chip 0 is not handed
	// out twice, and the pod Volcano placed after it gets its chip.
	t.Run("chip in use", func(t *testing.T) {
		for _, name := range []string{"attacker", "late"} {
			defer func() {
				if err := cs.CoreV1().Pods("default").Delete(ctx, name, *metav1.NewDeleteOptions(0)); err != nil {
					t.Error(err)
				}
			}()
		}
		create(volcanoPod("attacker", "Ascend910-0", "0"))
		create(volcanoPod("late", "Ascend910-6", "5000"))
		var resp *pluginapi.AllocateResponse
		var err error
		for { // until the cache shows the late pod
			if resp, err = p.Allocate(ctx, []string{"Ascend910-1"}); status.Code(err) != codes.NotFound {
				break
			}
		}
		if err != nil {
			t.Fatalf("Allocate: %v", err)
		}
		if got := resp.ContainerResponses[0].Envs["ASCEND_VISIBLE_DEVICES"]; got != "6" {
			t.Errorf("Allocate gave chips %q, want 6", got)
		}
		if got, ok := annotations("attacker")["huawei.com/AscendReal"]; ok {
			t.Errorf("attacker pod got chips %q", got)
		}
		if got := annotations("late")["huawei.com/AscendReal"]; got != "Ascend910-6" {
			t.Errorf("late pod AscendReal = %q, want Ascend910-6", got)
		}
		// With no other pod left, the attacker's pod is still refused.
		if _, err := p.Allocate(ctx, []string{"Ascend910-1"}); status.Code(err) != codes.NotFound {
			t.Errorf("Allocate with only the attacker's pod pending = %v, want NotFound", err)
		}
	})

	// Bad inputs: each pod is alone among the pending candidates when its
	// Allocate runs; nothing may be written to it.
	if err := v.Simulator().SetHealth(2, ascend.HealthCritical); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for v.Health(2).Healthy {
		if time.Now().After(deadline) {
			t.Fatal("chip 2 did not turn unhealthy within a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	bad := []struct {
		name     string
		chips    string
		wantCode codes.Code
	}{
		{"malformed", "Ascend910-x,", codes.InvalidArgument},
		{"foreign-chip", "Ascend910-1,Ascend910-12", codes.InvalidArgument},
		{"unhealthy-chip", "Ascend910-1,Ascend910-2", codes.FailedPrecondition},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			create(volcanoPod(tc.name, tc.chips, "3000"))
			defer func() {
				if err := cs.CoreV1().Pods("default").Delete(ctx, tc.name, *metav1.NewDeleteOptions(0)); err != nil {
					t.Fatal(err)
				}
			}()
			var err error
			// Wait out the plugin's pod cache: until it sees this pod the
			// answer is NotFound, and until it sees the previous case's pod
			// deleted, the answer may be about that pod.
			earlier := func(err error) bool {
				msg := status.Convert(err).Message()
				return strings.HasPrefix(msg, "pod default/") && !strings.HasPrefix(msg, "pod default/"+tc.name+":")
			}
			for i := 0; i < 40; i++ {
				_, err = p.Allocate(ctx, []string{"Ascend910-6", "Ascend910-7"})
				if earlier(err) {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				if status.Code(err) != codes.NotFound {
					break
				}
			}
			if status.Code(err) != tc.wantCode {
				t.Fatalf("Allocate: %v, want code %v", err, tc.wantCode)
			}
			for _, k := range []string{volcano.AnnotationRealKey, annotation.ConfigurationKey} {
				if got, ok := annotations(tc.name)[k]; ok {
					t.Errorf("%s written on a refused pod: %q", k, got)
				}
			}
		})
	}
	// No pending pod at all: a clear NotFound within the bounded wait.
	waitGone := time.Now().Add(time.Minute)
	var err2 error
	for time.Now().Before(waitGone) {
		_, err2 = p.Allocate(ctx, []string{"Ascend910-6"})
		if status.Code(err2) == codes.NotFound {
			break
		}
	}
	if status.Code(err2) != codes.NotFound {
		t.Errorf("Allocate without a pod: %v, want NotFound", err2)
	}
}
