package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/test/harness"
)

// TestNodeAgentLabels runs the node-agent binary against a real API
// server with a simulated MIG-mixed DGX A100 and changes the device
// plugin config file under it: the GFD labels appear, follow the config,
// stale ones are removed, and labels of other managers stay untouched.
func TestNodeAgentLabels(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	ctx := context.Background()
	const nodeName = "gpu-node-1"
	others := map[string]string{
		"kubernetes.io/hostname":                  nodeName,
		"nvidia.com/gpu.deploy.container-toolkit": "true", // another manager's nvidia.com label
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: others}}
	if err := cp.Client.Create(ctx, node, client.FieldOwner("admin")); err != nil {
		t.Fatal(err)
	}

	cfg := filepath.Join(t.TempDir(), "config.yaml")
	writeCfg := func(s string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeCfg("version: v1\n")
	startNodeAgent(t, "--backend=simulated", "--simulate=dgxa100-mig-mixed", "--node-name="+nodeName,
		"--kubeconfig="+cp.KubeconfigPath, "--config-file="+cfg, "--collect-interval=200ms", "--pod-resources-socket=")

	stages := []struct {
		name   string
		config string
		want   map[string]string // "" means absent
	}{
		{
			name: "labels appear", config: "version: v1\n",
			want: map[string]string{
				"nvidia.com/gpu.product": "Mock-NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.count": "8",
				"nvidia.com/gpu.replicas": "1", "nvidia.com/gpu.memory": "40960", "nvidia.com/gpu.family": "ampere",
				"nvidia.com/gpu.compute.major": "8", "nvidia.com/gpu.compute.minor": "0",
				"nvidia.com/cuda.driver-version.major": "550", "nvidia.com/cuda.driver-version.minor": "54",
				"nvidia.com/cuda.driver-version.revision": "15", "nvidia.com/mig.capable": "true",
				"nvidia.com/mig.strategy": "none", "nvidia.com/gpu.sharing-strategy": "none",
				"nvidia.com/mig-1g.5gb.count": "",
			},
		},
		{
			name: "mixed strategy with a time-sliced MIG resource",
			config: `version: v1
flags:
  migStrategy: mixed
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/mig-1g.5gb
      replicas: 2
`,
			want: map[string]string{
				"nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.sharing-strategy": "time-slicing",
				"nvidia.com/mig-1g.5gb.count": "13", "nvidia.com/mig-1g.5gb.replicas": "2",
				"nvidia.com/mig-1g.5gb.product": "Mock-NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED",
				"nvidia.com/mig-3g.20gb.count":  "4",
			},
		},
		{
			name: "time-slicing whole GPUs removes the stale MIG labels",
			config: `version: v1
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/gpu
      replicas: 4
`,
			want: map[string]string{
				"nvidia.com/gpu.product": "Mock-NVIDIA-A100-SXM4-40GB-SHARED", "nvidia.com/gpu.replicas": "4",
				"nvidia.com/mig.strategy": "none", "nvidia.com/gpu.sharing-strategy": "time-slicing",
				"nvidia.com/mig-1g.5gb.count": "", "nvidia.com/mig-1g.5gb.product": "", "nvidia.com/mig-3g.20gb.count": "",
			},
		},
	}
	for _, st := range stages {
		t.Run(st.name, func(t *testing.T) {
			writeCfg(st.config)
			naEventually(t, "node labels", func() error {
				var n corev1.Node
				if err := cp.Client.Get(ctx, client.ObjectKey{Name: nodeName}, &n); err != nil {
					return err
				}
				var diffs []string
				for k, v := range st.want {
					if got, ok := n.Labels[k]; got != v || (v == "" && ok) {
						diffs = append(diffs, fmt.Sprintf("%s=%q (present %v), want %q", k, got, ok, v))
					}
				}
				for k, v := range others {
					if n.Labels[k] != v {
						diffs = append(diffs, fmt.Sprintf("other manager's %s=%q, want %q", k, n.Labels[k], v))
					}
				}
				if len(diffs) > 0 {
					return fmt.Errorf("%s", strings.Join(diffs, "; "))
				}
				return checkOwnership(n)
			})
		})
	}
}

// checkOwnership checks that the agent's field manager owns only
// nvidia.com labels it writes, none of the others'.
func checkOwnership(n corev1.Node) error {
	for _, mf := range n.ManagedFields {
		if mf.Manager != "accelstack-node-agent" {
			continue
		}
		if mf.Operation != metav1.ManagedFieldsOperationApply {
			return fmt.Errorf("agent's operation = %s, want Apply", mf.Operation)
		}
		raw := mf.FieldsV1.GetRawString()
		for _, other := range []string{"kubernetes.io/hostname", "container-toolkit"} {
			if strings.Contains(raw, other) {
				return fmt.Errorf("agent owns %s: %s", other, raw)
			}
		}
		return nil
	}
	return fmt.Errorf("no managed fields of accelstack-node-agent on the node")
}
