package volcano

import (
	"fmt"

	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// NewKubeClient connects to the API server's core/v1 group with a
// kubeconfig file, or in-cluster when kubeconfig is "".
func NewKubeClient(kubeconfig string) (corev1client.CoreV1Interface, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("loading cluster configuration: %w", err)
	}
	cfg.UserAgent = "accelstack-ascend-device-plugin"
	cs, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating cluster client: %w", err)
	}
	return cs, nil
}
