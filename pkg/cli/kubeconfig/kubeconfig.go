// Package kubeconfig finds the API server for the binaries that talk to
// one, the same way in each: a --kubeconfig file when given, else
// in-cluster, $KUBECONFIG or ~/.kube/config. It is apart from package cli
// so that binaries without a client link no client-go.
package kubeconfig

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
)

// RESTConfig returns the configuration of the API server of path, or,
// when path is "", of the pod's ServiceAccount, $KUBECONFIG or
// ~/.kube/config.
func RESTConfig(path string) (*rest.Config, error) {
	if path == "" {
		cfg, err := ctrl.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("finding the cluster (in-cluster, $KUBECONFIG or --kubeconfig): %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading --kubeconfig %s: %w", path, err)
	}
	if cfg.QPS == 0 {
		// As ctrl.GetConfig does: no client-side rate limit (client-go's
		// default is 5 requests/s), the API server's priority and
		// fairness does that job.
		cfg.QPS = -1
	}
	return cfg, nil
}
