package nodeagent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	timeSlicingConfig = `version: v1
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/gpu
      replicas: 4
`
	mixedConfig = `version: v1
flags:
  migStrategy: mixed
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/mig-1g.5gb
      replicas: 2
`
	singleConfig = `version: v1
flags:
  migStrategy: single
`
)

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	if content == "" {
		return ""
	}
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGFDLabels(t *testing.T) {
	a100 := map[string]string{
		LabelGPUFamily: "ampere", LabelGPUComputeMajor: "8", LabelGPUComputeMinor: "0",
		LabelDriverMajor: "550", LabelDriverMinor: "54", LabelDriverRevision: "15",
		LabelMIGCapable: "true",
	}
	with := func(base map[string]string, extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	testCases := []struct {
		name    string
		profile string
		config  string
		want    map[string]string
	}{
		{
			name: "whole GPUs", profile: "dgxa100",
			want: with(a100, map[string]string{
				LabelGPUProduct: "Mock-NVIDIA-A100-SXM4-40GB", LabelGPUCount: "8", LabelGPUReplicas: "1",
				LabelGPUMemory: "40960", LabelMIGStrategy: "none", LabelGPUSharingStrategy: "none",
			}),
		},
		{
			name: "time-slicing", profile: "dgxa100", config: timeSlicingConfig,
			want: with(a100, map[string]string{
				LabelGPUProduct: "Mock-NVIDIA-A100-SXM4-40GB-SHARED", LabelGPUCount: "8", LabelGPUReplicas: "4",
				LabelGPUMemory: "40960", LabelMIGStrategy: "none", LabelGPUSharingStrategy: "time-slicing",
			}),
		},
		{
			name: "MIG single", profile: "dgxa100-mig-single", config: singleConfig,
			want: with(a100, map[string]string{
				LabelGPUProduct: "Mock-NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", LabelGPUCount: "56", LabelGPUReplicas: "1",
				LabelGPUMemory: "4864", LabelMIGStrategy: "single", LabelGPUSharingStrategy: "none",
			}),
		},
		{
			name: "MIG mixed with a time-sliced MIG resource", profile: "dgxa100-mig-mixed", config: mixedConfig,
			want: with(a100, map[string]string{
				LabelGPUProduct: "Mock-NVIDIA-A100-SXM4-40GB", LabelGPUCount: "8", LabelGPUReplicas: "1",
				LabelGPUMemory: "40960", LabelMIGStrategy: "mixed", LabelGPUSharingStrategy: "time-slicing",
				"nvidia.com/mig-1g.5gb.count": "13", "nvidia.com/mig-1g.5gb.memory": "4864", "nvidia.com/mig-1g.5gb.replicas": "2",
				"nvidia.com/mig-1g.5gb.product": "Mock-NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED",
				"nvidia.com/mig-2g.10gb.count":  "8", "nvidia.com/mig-2g.10gb.memory": "9856", "nvidia.com/mig-2g.10gb.replicas": "1",
				"nvidia.com/mig-2g.10gb.product": "Mock-NVIDIA-A100-SXM4-40GB-MIG-2g.10gb",
				"nvidia.com/mig-3g.20gb.count":   "4", "nvidia.com/mig-3g.20gb.memory": "19968", "nvidia.com/mig-3g.20gb.replicas": "1",
				"nvidia.com/mig-3g.20gb.product": "Mock-NVIDIA-A100-SXM4-40GB-MIG-3g.20gb",
			}),
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			src, _ := newSimSource(t, tc.profile, writeConfig(t, tc.config))
			got, err := src.Collect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.NodeLabels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGFDLabelsSingleOnNonUniformNode(t *testing.T) {
	src, _ := newSimSource(t, "dgxa100-mig-mixed", writeConfig(t, singleConfig))
	got, err := src.Collect(context.Background())
	if err == nil {
		t.Fatal("Collect succeeded on a non-uniform node under single, want an error naming the problem")
	}
	if got.NodeLabels[LabelGPUProduct] != "Mock-NVIDIA-A100-SXM4-40GB" || len(got.Devices) == 0 {
		t.Errorf("product = %q with %d devices, want whole-GPU labels and the devices still served", got.NodeLabels[LabelGPUProduct], len(got.Devices))
	}
}

func TestAscendLabels(t *testing.T) {
	got := AscendLabels("Ascend910B", 20, 8)
	want := map[string]string{LabelAscendServerType: "Ascend910B-20", LabelAscendNPUCount: "8"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AscendLabels (-want +got):\n%s", diff)
	}
}
