//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/accelstack/accelstack/test/cluster"
)

// TestNodeWritesPassTheNodePolicies checks that the admission policies of
// deploy/daemonsets/node-policies.yaml, which keep the Ascend plugin and
// the node agent to the node in their token, let their own writes through
// with the tokens a real kubelet gives their pods: the node agent's GPU
// labels, the Ascend plugin's servertype label and its device-info
// ConfigMap all reach the API server.
func TestNodeWritesPassTheNodePolicies(t *testing.T) {
	if _, err := kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(testContext(t), "accelstack-ascend-device-plugin", metav1.GetOptions{}); err != nil {
		policies, _ := kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(testContext(t), metav1.ListOptions{})
		names := []string{}
		if policies != nil {
			for _, p := range policies.Items {
				names = append(names, p.Name)
			}
		}
		t.Fatalf("the Ascend plugin's node policy is not installed: %v (installed: %v)", err, names)
	}
	var labels map[string]string
	var cmErr error
	err := wait.PollUntilContextCancel(testContext(t), 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		n, err := kube.CoreV1().Nodes().Get(ctx, cluster.NodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		labels = n.Labels
		_, cmErr = kube.CoreV1().ConfigMaps("kube-system").Get(ctx, "mindx-dl-deviceinfo-"+cluster.NodeName, metav1.GetOptions{})
		return labels["nvidia.com/gpu.product"] != "" && labels["servertype"] != "" && cmErr == nil, nil
	})
	if err != nil {
		t.Fatalf("node writes did not land: nvidia.com/gpu.product=%q servertype=%q, ConfigMap kube-system/mindx-dl-deviceinfo-%s: %v",
			labels["nvidia.com/gpu.product"], labels["servertype"], cluster.NodeName, cmErr)
	}
}
