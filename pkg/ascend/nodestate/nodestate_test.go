package nodestate

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/accelstack/accelstack/pkg/ascend"
	"github.com/accelstack/accelstack/pkg/nodeclient/nodeclienttest"
)

type source struct {
	chips  []ascend.Chip
	health map[int]ascend.ChipHealth
}

func (s source) Chips() []ascend.Chip             { return s.chips }
func (s source) Health(phy int) ascend.ChipHealth { return s.health[phy] }

func chip(phy int) ascend.Chip {
	return ascend.Chip{PhyID: phy, IP: "192.168.1.1", Info: ascend.ChipInfo{Type: "Ascend", Name: "910B", AICores: 20}}
}

func TestSync(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{AcceleratorTypeLabel: "module-910b-8", HostArchLabel: "huawei-x86"}}})
	ok := ascend.ChipHealth{Healthy: true, NetworkHealthy: true}
	src := source{chips: []ascend.Chip{chip(1), chip(0), chip(2)}, health: map[int]ascend.ChipHealth{
		0: ok, 1: {Healthy: false, NetworkHealthy: true}, 2: {Healthy: true, NetworkHealthy: false},
	}}
	r, err := New(Options{Client: nodeclienttest.Typed{C: cs.CoreV1()}, NodeName: "n1"}, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps(Namespace).Get(ctx, ConfigMapPrefix+"n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cfg DeviceInfoCfg
	if err := json.Unmarshal([]byte(cm.Data[ConfigMapKey]), &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"huawei.com/Ascend910": "Ascend910-0", "huawei.com/Ascend910-Unhealthy": "Ascend910-1", "huawei.com/Ascend910-NetworkUnhealthy": "Ascend910-2"}
	for k, v := range want {
		if cfg.DeviceInfo.DeviceList[k] != v {
			t.Errorf("%s = %q, want %q", k, cfg.DeviceInfo.DeviceList[k], v)
		}
	}
	sum, err := Checksum(cfg.DeviceInfo)
	if err != nil {
		t.Fatal(err)
	}
	if sum == "" || sum != cfg.CheckCode {
		t.Errorf("CheckCode %q, want %q", cfg.CheckCode, sum)
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels[ServerTypeLabel] != "Ascend910B-20" || n.Labels[AcceleratorTypeLabel] != "module-910b-8" || n.Labels[HostArchLabel] != "huawei-x86" {
		t.Errorf("labels %v", n.Labels)
	}

	// Unchanged: no write until the refresh interval.
	before := len(cs.Actions())
	if err := r.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if after := len(cs.Actions()); after != before {
		t.Errorf("unchanged state wrote %d actions", after-before)
	}
}

func TestNoChipsNoWrites(t *testing.T) {
	cs := fake.NewClientset()
	r, err := New(Options{Client: nodeclienttest.Typed{C: cs.CoreV1()}, NodeName: "n1"}, source{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(context.Background()); err != nil || len(cs.Actions()) != 0 {
		t.Fatalf("err %v, actions %v", err, cs.Actions())
	}
	if _, err := New(Options{NodeName: "n1"}, source{}); err == nil {
		t.Fatal("no client accepted")
	}
}
