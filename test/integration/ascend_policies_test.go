package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/accelstack/accelstack/test/harness"
)

// nodeClaimKey is the user extra the API server fills from a pod-bound
// service account token: the node the pod runs on.
const nodeClaimKey = "authentication.kubernetes.io/node-name"

// saClient acts as service account sa of accelstack-system, with a token
// bound to a pod on node ("" for a token without the node claim).
func saClient(t *testing.T, cfg *rest.Config, sa, node string) kubernetes.Interface {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:accelstack-system:" + sa}
	if node != "" {
		c.Impersonate.Extra = map[string][]string{nodeClaimKey: {node}}
	}
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// deniedByPolicy reports whether err is a ValidatingAdmissionPolicy denial
// (RBAC denials are Forbidden too, but say nothing of a policy).
func deniedByPolicy(err error) bool {
	return err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy")
}

// TestNodePolicies applies the node DaemonSets' RBAC and admission policies
// from deploy/ to a real API server and checks that the Ascend device
// plugin and the node agent, acting with a token bound to node-a, can do
// their work on node-a and nothing that RBAC alone would let them do
// elsewhere: other nodes' pods, pod specs and labels, other ConfigMaps,
// other nodes, node specs.
func TestNodePolicies(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t, harness.WithoutCRDs())
	cp.ApplyDeploy(t, "namespace.yaml", "daemonsets/ascend-device-plugin.yaml", "daemonsets/node-agent.yaml", "daemonsets/node-policies.yaml")
	admin, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, n := range []string{"node-a", "node-b"} {
		if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod-on-" + n, Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: n, Containers: []corev1.Container{{Name: "c", Image: "mindspore"}}}}
		if _, err := admin.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.CoreV1().ConfigMaps("kube-system").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "coredns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	plugin := saClient(t, cp.Config, "ascend-device-plugin", "node-a")
	pods := plugin.CoreV1().Pods("default")
	annotate := func(key, value string) []byte {
		return fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, key, value)
	}
	agent := saClient(t, cp.Config, "node-agent", "node-a")
	label := []byte(`{"metadata":{"labels":{"servertype":"Ascend910B-20"}}}`)
	// Policies take effect once the API server has loaded them, each in
	// its own time: wait for a change that RBAC allows to be refused by
	// the pods' policy (a patch of node-b's pod by the plugin) and by the
	// nodes' (a label on node-b by the agent). Neither change is kept
	// before its policy applies: the checks below do not depend on them.
	for what, change := range map[string]func(i int) error{
		"the plugin's patch of node-b's pod": func(i int) error {
			_, err := pods.Patch(ctx, "pod-on-node-b", types.MergePatchType, annotate("huawei.com/AscendReal", fmt.Sprintf("Ascend910-%d", i)), metav1.PatchOptions{})
			return err
		},
		"the agent's label on node-b": func(i int) error {
			_, err := agent.CoreV1().Nodes().Patch(ctx, "node-b", types.MergePatchType, label, metav1.PatchOptions{})
			return err
		},
	} {
		deadline := time.Now().Add(time.Minute)
		for i := 0; ; i++ {
			err := change(i)
			if deniedByPolicy(err) {
				break
			}
			if err != nil {
				t.Fatalf("%s before the policy applies: %v", what, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("no ValidatingAdmissionPolicy refused %s within a minute: is the admission plugin enabled?", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	writeBack := []byte(`{"metadata":{"annotations":{"huawei.com/AscendReal":"Ascend910-0","huawei.com/kltDev":"Ascend910-3",` +
		`"ascend.kubectl.kubernetes.io/ascend-910-configuration":"{}"}}}`)
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"}, Data: map[string]string{"k": "v"}}
	}
	cordon := []byte(`{"spec":{"unschedulable":true}}`)
	checks := []struct {
		name    string
		do      func() error
		allowed bool
	}{
		{"plugin writes back to a pod on its node", func() error {
			_, err := pods.Patch(ctx, "pod-on-node-a", types.MergePatchType, writeBack, metav1.PatchOptions{})
			return err
		}, true},
		{"plugin annotates a pod on another node", func() error {
			_, err := pods.Patch(ctx, "pod-on-node-b", types.MergePatchType, annotate("huawei.com/AscendReal", "Ascend910-7"), metav1.PatchOptions{})
			return err
		}, false},
		{"plugin changes a pod's image", func() error {
			_, err := pods.Patch(ctx, "pod-on-node-a", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/containers/0/image","value":"evil"}]`), metav1.PatchOptions{})
			return err
		}, false},
		{"plugin sets another annotation", func() error {
			_, err := pods.Patch(ctx, "pod-on-node-a", types.MergePatchType, annotate("example.com/other", "x"), metav1.PatchOptions{})
			return err
		}, false},
		{"plugin labels a pod", func() error {
			_, err := pods.Patch(ctx, "pod-on-node-a", types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"x"}}}`), metav1.PatchOptions{})
			return err
		}, false},
		{"plugin without a node claim writes back", func() error {
			_, err := saClient(t, cp.Config, "ascend-device-plugin", "").CoreV1().Pods("default").Patch(ctx, "pod-on-node-a", types.MergePatchType, writeBack, metav1.PatchOptions{})
			return err
		}, false},
		{"plugin creates its node's device-info ConfigMap", func() error {
			_, err := plugin.CoreV1().ConfigMaps("kube-system").Create(ctx, cm("mindx-dl-deviceinfo-node-a"), metav1.CreateOptions{})
			return err
		}, true},
		{"plugin updates its node's device-info ConfigMap", func() error {
			_, err := plugin.CoreV1().ConfigMaps("kube-system").Update(ctx, cm("mindx-dl-deviceinfo-node-a"), metav1.UpdateOptions{})
			return err
		}, true},
		{"plugin creates another node's device-info ConfigMap", func() error {
			_, err := plugin.CoreV1().ConfigMaps("kube-system").Create(ctx, cm("mindx-dl-deviceinfo-node-b"), metav1.CreateOptions{})
			return err
		}, false},
		{"plugin updates another ConfigMap", func() error {
			_, err := plugin.CoreV1().ConfigMaps("kube-system").Update(ctx, cm("coredns"), metav1.UpdateOptions{})
			return err
		}, false},
		{"plugin labels its node", func() error {
			_, err := plugin.CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, label, metav1.PatchOptions{})
			return err
		}, true},
		{"plugin labels another node", func() error {
			_, err := plugin.CoreV1().Nodes().Patch(ctx, "node-b", types.MergePatchType, label, metav1.PatchOptions{})
			return err
		}, false},
		{"plugin cordons its node", func() error {
			_, err := plugin.CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, cordon, metav1.PatchOptions{})
			return err
		}, false},
		{"agent labels its node", func() error {
			_, err := agent.CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, []byte(`{"metadata":{"labels":{"nvidia.com/gpu.count":"8"}}}`), metav1.PatchOptions{})
			return err
		}, true},
		{"agent labels another node", func() error {
			_, err := agent.CoreV1().Nodes().Patch(ctx, "node-b", types.MergePatchType, label, metav1.PatchOptions{})
			return err
		}, false},
		{"agent cordons its node", func() error {
			_, err := agent.CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, cordon, metav1.PatchOptions{})
			return err
		}, false},
		{"agent without a node claim labels a node", func() error {
			_, err := saClient(t, cp.Config, "node-agent", "").CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, label, metav1.PatchOptions{})
			return err
		}, false},
	}
	for _, tc := range checks {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			switch {
			case tc.allowed && err != nil:
				t.Errorf("refused: %v", err)
			case !tc.allowed && !deniedByPolicy(err):
				t.Errorf("got %v, want a refusal by the admission policy", err)
			}
		})
	}
	pod, err := admin.CoreV1().Pods("default").Get(ctx, "pod-on-node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.Containers[0].Image != "mindspore" || pod.Annotations["huawei.com/AscendReal"] != "Ascend910-0" {
		t.Errorf("node-a's pod: image %q, AscendReal %q; want mindspore and Ascend910-0", pod.Spec.Containers[0].Image, pod.Annotations["huawei.com/AscendReal"])
	}
}
