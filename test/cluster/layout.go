package cluster

import (
	"path/filepath"
)

// Fixed addresses and names of the local cluster.
const (
	// NodeName is the name the kubelet registers, whatever the hostname.
	NodeName = "accelstack-node"
	// Bridge is the CNI bridge, created by Up with the two addresses below.
	Bridge = "accel0"
	// GatewayIP is the node's InternalIP and the pods' default gateway.
	GatewayIP = "10.244.0.1"
	// PodCIDR is the pod network on Bridge.
	PodCIDR = "10.244.0.0/24"
	// APIServerIP is the ClusterIP of the kubernetes Service; kube-apiserver
	// listens on it, port 443, so in-cluster clients need no kube-proxy.
	APIServerIP = "10.0.0.1"
	// ServiceCIDR is the Service ClusterIP range.
	ServiceCIDR = "10.0.0.0/24"
	// ClusterDomain is the DNS domain of Services; the cluster's DNS
	// server (package test/cluster/dns) listens on GatewayIP, port 53.
	ClusterDomain = "cluster.local"
	// KubeletRoot is the kubelet's root directory: the default, so the
	// hostPaths of the real manifests in deploy/ work unchanged.
	KubeletRoot = "/var/lib/kubelet"
)

// APIServerURL is where clients reach kube-apiserver.
var APIServerURL = "https://" + APIServerIP + ":443"

// hostPaths are the paths outside the state dir that the kubelet,
// containerd and the CNI plugins create whatever their configuration. Down
// removes those that did not exist before Up.
var hostPaths = []string{
	KubeletRoot,
	"/var/log/containers",
	"/var/log/pods",
	"/var/lib/cni",
	"/run/containerd",
	"/run/netns",
	"/run/accelstack",
}

// kernelTunables are the sysctls the kubelet sets at start, plus the one
// the CNI bridge plugin sets for a gateway bridge. Up saves them and Down
// restores them.
var kernelTunables = []string{
	"vm.overcommit_memory",
	"vm.panic_on_oom",
	"kernel.panic",
	"kernel.panic_on_oops",
	"kernel.keys.root_maxkeys",
	"kernel.keys.root_maxbytes",
	"net.ipv4.ip_forward",
}

// layout names the files under the state directory.
type layout struct{ dir string }

func (l layout) path(elem ...string) string {
	return filepath.Join(append([]string{l.dir}, elem...)...)
}
func (l layout) pki(name string) string    { return l.path("pki", name) }
func (l layout) logs() string              { return l.path("logs") }
func (l layout) pids() string              { return l.path("pids") }
func (l layout) hostRecord() string        { return l.path("host.json") }
func (l layout) containerdSocket() string  { return l.path("run", "containerd.sock") }
func (l layout) adminKubeconfig() string   { return l.path("kubeconfig") }
func (l layout) kubeletKubeconfig() string { return l.pki("kubelet.kubeconfig") }
