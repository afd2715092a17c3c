package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/accelstack/accelstack/test/podresources"
)

func TestPodResourcesClientList(t *testing.T) {
	srv := podresources.Start(t)
	srv.SetPods(
		podresources.Pod("ml", "train-0",
			podresources.Container("main",
				podresources.Devices("nvidia.com/gpu", "GPU-a", "GPU-b"),
				podresources.Devices("example.com/fpga", "fpga-0")),
			podresources.Container("sidecar")),
		podresources.Pod("ml", "infer", podresources.Container("server", podresources.Devices("nvidia.com/gpu.shared", "GPU-c::0"))),
		podresources.Pod("npu", "job", podresources.Container("worker", podresources.Devices("huawei.com/Ascend910", "Ascend910-3"))),
	)
	c := &PodResourcesClient{Socket: srv.Path()}
	got, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Assignment{
		{Owner: Owner{"ml", "train-0", "main"}, Resource: "nvidia.com/gpu", DeviceIDs: []string{"GPU-a", "GPU-b"}},
		{Owner: Owner{"ml", "infer", "server"}, Resource: "nvidia.com/gpu.shared", DeviceIDs: []string{"GPU-c::0"}},
		{Owner: Owner{"npu", "job", "worker"}, Resource: "huawei.com/Ascend910", DeviceIDs: []string{"Ascend910-3"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
}

func TestPodResourcesClientErrors(t *testing.T) {
	srv := podresources.Start(t)
	srv.SetError(errors.New("kubelet restarting"))
	testCases := []struct {
		name    string
		socket  string
		wantErr string
		wantIs  error
	}{
		{name: "missing socket", socket: "/nonexistent/kubelet.sock", wantErr: "mount /var/lib/kubelet/pod-resources", wantIs: ErrNoPodResourcesSocket},
		{name: "server error", socket: srv.Path(), wantErr: "kubelet restarting"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&PodResourcesClient{Socket: tc.socket}).List(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("List = %v, want an error with %q", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("List = %v, want errors.Is %v", err, tc.wantIs)
			}
		})
	}
}

func TestOwners(t *testing.T) {
	testCases := []struct {
		name string
		in   []Assignment
		want map[string][]Owner
	}{
		{
			name: "replicas of one GPU held by two pods and twice by one",
			in: []Assignment{
				{Owner: Owner{"a", "p1", "c"}, Resource: "nvidia.com/gpu.shared", DeviceIDs: []string{"GPU-x::0", "GPU-x::3"}},
				{Owner: Owner{"a", "p0", "c"}, Resource: "nvidia.com/gpu.shared", DeviceIDs: []string{"GPU-x::1"}},
			},
			want: map[string][]Owner{"GPU-x": {{"a", "p0", "c"}, {"a", "p1", "c"}}},
		},
		{
			name: "whole GPU, MIG device and NPU",
			in: []Assignment{
				{Owner: Owner{"a", "p", "c"}, Resource: "nvidia.com/gpu", DeviceIDs: []string{"GPU-y"}},
				{Owner: Owner{"b", "q", "d"}, Resource: "nvidia.com/mig-1g.5gb", DeviceIDs: []string{"MIG-z"}},
				{Owner: Owner{"b", "r", "e"}, Resource: "huawei.com/Ascend910", DeviceIDs: []string{"Ascend910-0"}},
			},
			want: map[string][]Owner{"GPU-y": {{"a", "p", "c"}}, "MIG-z": {{"b", "q", "d"}}, "Ascend910-0": {{"b", "r", "e"}}},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Owners(tc.in)); diff != "" {
				t.Errorf("Owners (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAttributionEveryResourceKind collects a simulated MIG-mixed DGX A100
// with pods holding a whole GPU, time-sliced replicas of one GPU (three
// pods), MIG devices under mixed names, a GPU by NVML index, and checks
// the pod labels on the DCGM series.
func TestAttributionEveryResourceKind(t *testing.T) {
	src, _ := newSimSource(t, "dgxa100-mig-mixed", "")
	devs, err := src.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byIndex := map[string]Device{}
	for _, d := range devs.Devices {
		byIndex[d.Aliases[0]] = d
	}
	whole, shared, byIdx := byIndex["6"], byIndex["7"], byIndex["1:0"]
	mig0, mig1 := byIndex["0:0"], byIndex["0:2"]
	if whole.ID == "" || shared.ID == "" || mig0.MIG == nil || mig1.MIG == nil {
		t.Fatalf("simulated machine lacks the expected devices: %v", byIndex)
	}
	srv := podresources.Start(t)
	srv.SetPods(
		podresources.Pod("team", "whole", podresources.Container("main", podresources.Devices("nvidia.com/gpu", whole.ID))),
		podresources.Pod("team", "share-a", podresources.Container("main", podresources.Devices("nvidia.com/gpu.shared", shared.ID+"::0"))),
		podresources.Pod("team", "share-b", podresources.Container("main", podresources.Devices("nvidia.com/gpu.shared", shared.ID+"::1"))),
		podresources.Pod("other", "share-c", podresources.Container("w", podresources.Devices("nvidia.com/gpu.shared", shared.ID+"::5"))),
		podresources.Pod("team", "mig", podresources.Container("main",
			podresources.Devices(fmt.Sprintf("nvidia.com/mig-%s", mig0.MIG.Profile), mig0.ID),
			podresources.Devices(fmt.Sprintf("nvidia.com/mig-%s", mig1.MIG.Profile), mig1.ID))),
		podresources.Pod("team", "by-index", podresources.Container("main", podresources.Devices(fmt.Sprintf("nvidia.com/mig-%s", byIdx.MIG.Profile), "1:0"))),
		podresources.Pod("team", "cpu-only", podresources.Container("main", &podresourcesv1.ContainerDevices{ResourceName: "example.com/nic", DeviceIds: []string{whole.ID}})),
	)
	c := NewCollector("node-1", []Source{src}, &PodResourcesClient{Socket: srv.Path()}, nil)
	c.CollectOnce(context.Background())
	all := gather(t, c)

	testCases := []struct {
		name     string
		selector map[string]string
		want     []string
	}{
		{name: "whole GPU", selector: map[string]string{"UUID": whole.ID}, want: []string{"team/whole/main"}},
		{name: "shared GPU: one series per pod", selector: map[string]string{"UUID": shared.ID}, want: []string{"other/share-c/w", "team/share-a/main", "team/share-b/main"}},
		{name: "MIG device", selector: map[string]string{"UUID": mig0.MIG.ParentID, "GPU_I_ID": fmt.Sprint(mig0.MIG.GPUInstance)}, want: []string{"team/mig/main"}},
		{name: "second MIG device", selector: map[string]string{"UUID": mig1.MIG.ParentID, "GPU_I_ID": fmt.Sprint(mig1.MIG.GPUInstance)}, want: []string{"team/mig/main"}},
		{name: "MIG device by NVML index", selector: map[string]string{"UUID": byIdx.MIG.ParentID, "GPU_I_ID": fmt.Sprint(byIdx.MIG.GPUInstance)}, want: []string{"team/by-index/main"}},
		{name: "free GPU has no pod", selector: map[string]string{"gpu": "4", "GPU_I_ID": ""}, want: []string{"//"}},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := find(all, "DCGM_FI_DEV_GPU_TEMP", tc.selector)
			if tc.name == "free GPU has no pod" {
				var whole []series
				for _, s := range got {
					if s.labels["GPU_I_ID"] == "" {
						whole = append(whole, s)
					}
				}
				got = whole
			}
			if diff := cmp.Diff(tc.want, podsOf(got)); diff != "" {
				t.Errorf("pods on DCGM_FI_DEV_GPU_TEMP%v (-want +got):\n%s", tc.selector, diff)
			}
		})
	}
	if got := find(all, "accelstack_node_agent_podresources_up", nil); len(got) != 1 || got[0].value != 1 {
		t.Errorf("podresources_up = %v, want 1", got)
	}
}
