package integration

import (
	"testing"

	"github.com/accelstack/accelstack/pkg/ascend/annotation"
	"github.com/accelstack/accelstack/pkg/ascend/nodestate"
	"github.com/accelstack/accelstack/pkg/ascend/volcano"
	"github.com/accelstack/accelstack/pkg/ranktable"
)

// TestMindXWireNames pins the names MindX DL and Volcano read and write, as
// literals: renaming a constant breaks compatibility with them even though
// every test using the constant still passes.
func TestMindXWireNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ what, got, want string }{
		{"device-info ConfigMap namespace", nodestate.Namespace, "kube-system"},
		{"device-info ConfigMap prefix", nodestate.ConfigMapPrefix, "mindx-dl-deviceinfo-"},
		{"device-info key", nodestate.ConfigMapKey, "DeviceInfoCfg"},
		{"rank-table ConfigMap prefix", ranktable.ConfigMapPrefix, "rings-config-"},
		{"rank-table key", ranktable.ConfigMapKey, "hccl.json"},
		{"rank-table label", ranktable.RingControllerLabel, "ring-controller.atlas"},
		{"chips given", volcano.AnnotationRealKey, "huawei.com/AscendReal"},
		{"kubelet IDs", volcano.AnnotationKubeletDevicesKey, "huawei.com/kltDev"},
		{"predicate time", volcano.AnnotationPredicateTimeKey, "predicate-time"},
		{"pod configuration", annotation.ConfigurationKey, "ascend.kubectl.kubernetes.io/ascend-910-configuration"},
		{"Volcano scheduler", volcano.DefaultSchedulerName, "volcano"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.what, tc.got, tc.want)
		}
	}
}
