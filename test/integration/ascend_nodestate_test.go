package integration

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/ascend"
	"github.com/accelstack/accelstack/pkg/ascend/nodestate"
	"github.com/accelstack/accelstack/pkg/ascend/plugin"
	"github.com/accelstack/accelstack/test/harness"
)

// TestAscendNodeState runs the node-state reporter of a simulated 910B node
// against the real API server: the device-info ConfigMap lists the chips,
// follows faults and recoveries with a valid checksum, and the node gets
// servertype while the admin's accelerator-type and host-arch stay.
func TestAscendNodeState(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	const node = "ascend-node-1"
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{
		nodestate.AcceleratorTypeLabel: "module-910b-8", nodestate.HostArchLabel: "huawei-arm", nodestate.ServerTypeLabel: "stale",
	}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	v, err := plugin.NewVendor(plugin.Options{Backend: accelerator.BackendSimulated, Simulate: "ascend910b-8", HealthPeriod: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = v.Stop() }()
	r, err := nodestate.New(nodestate.Options{Client: ascendKube(t, cp.Config), NodeName: node, Period: 50 * time.Millisecond}, v)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { r.Run(runCtx); close(done) }()
	defer func() { stop(); <-done }()

	const res = accelerator.Ascend910
	waitLists(ctx, t, cs, node, map[string]string{
		res:                             "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-3,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7",
		res + nodestate.UnhealthySuffix: "", res + nodestate.NetworkUnhealthySuffix: "",
	})
	// The label follows the ConfigMap: wait for it rather than race it.
	var n *corev1.Node
	err = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		n, err = cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		return err == nil && n.Labels[nodestate.ServerTypeLabel] != "stale", err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Labels[nodestate.ServerTypeLabel]; got != nodestate.ServerType(v.Chips()) {
		t.Errorf("servertype = %q, want %q", got, nodestate.ServerType(v.Chips()))
	}
	if n.Labels[nodestate.AcceleratorTypeLabel] != "module-910b-8" || n.Labels[nodestate.HostArchLabel] != "huawei-arm" {
		t.Errorf("admin labels changed: %v", n.Labels)
	}

	sim := v.Simulator()
	if err := sim.SetHealth(2, ascend.HealthCritical, 80818692); err != nil {
		t.Fatal(err)
	}
	if err := sim.SetNetworkHealth(6, ascend.NetworkDown); err != nil {
		t.Fatal(err)
	}
	waitLists(ctx, t, cs, node, map[string]string{
		res:                             "Ascend910-0,Ascend910-1,Ascend910-3,Ascend910-4,Ascend910-5,Ascend910-7",
		res + nodestate.UnhealthySuffix: "Ascend910-2", res + nodestate.NetworkUnhealthySuffix: "Ascend910-6",
	})
	if err := sim.SetHealth(2, ascend.HealthMinor); err != nil {
		t.Fatal(err)
	}
	if err := sim.SetNetworkHealth(6, ascend.NetworkOK); err != nil {
		t.Fatal(err)
	}
	waitLists(ctx, t, cs, node, map[string]string{
		res:                             "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-3,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7",
		res + nodestate.UnhealthySuffix: "", res + nodestate.NetworkUnhealthySuffix: "",
	})
}

func waitLists(ctx context.Context, t *testing.T, cs kubernetes.Interface, node string, want map[string]string) {
	t.Helper()
	var cfg nodestate.DeviceInfoCfg
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		cm, err := cs.CoreV1().ConfigMaps(nodestate.Namespace).Get(ctx, nodestate.ConfigMapPrefix+node, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // not created yet
		}
		cfg = nodestate.DeviceInfoCfg{}
		if err := json.Unmarshal([]byte(cm.Data[nodestate.ConfigMapKey]), &cfg); err != nil {
			return false, err
		}
		if len(cfg.DeviceInfo.DeviceList) != len(want) {
			return false, nil
		}
		for k, v := range want {
			if cfg.DeviceInfo.DeviceList[k] != v {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("device info never became %v; last %+v: %v", want, cfg, err)
	}
	if sum, err := nodestate.Checksum(cfg.DeviceInfo); err != nil || sum != cfg.CheckCode || cfg.DeviceInfo.UpdateTime == 0 {
		t.Fatalf("checksum %q, want %q (%v); update time %d", cfg.CheckCode, sum, err, cfg.DeviceInfo.UpdateTime)
	}
}
