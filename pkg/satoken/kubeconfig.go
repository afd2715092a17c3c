package satoken

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Cluster is the API server a kubeconfig points at.
type Cluster struct {
	// Server is the API server's URL.
	Server string
	// CAData is the PEM of the CA the API server's certificate chains to;
	// empty trusts the system's roots.
	CAData []byte
}

// kubeconfig renders a kubeconfig that reaches cluster as token, in the
// namespace ns.
func kubeconfig(cluster Cluster, ns, name, token string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["accelstack"] = &clientcmdapi.Cluster{Server: cluster.Server, CertificateAuthorityData: cluster.CAData}
	user := ns + "-" + name
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "accelstack", AuthInfo: user, Namespace: ns}
	cfg.CurrentContext = name
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("rendering the kubeconfig: %w", err)
	}
	return b, nil
}
