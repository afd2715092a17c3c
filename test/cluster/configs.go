package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// PauseImage and BusyboxImage are the two base images every cluster has.
const (
	PauseImage   = "localhost/accelstack/pause:3.10"
	BusyboxImage = "localhost/accelstack/busybox:1.35"
)

// cniBinDir is where Debian's containernetworking-plugins installs.
const cniBinDir = "/usr/lib/cni"

// writeConfigs writes containerd's config, the CNI network and the kubelet
// configuration under l.
func writeConfigs(l layout) error {
	for _, d := range []string{l.path("containerd"), l.path("run"), l.path("cni", "net.d"), l.path("cni", "ipam"), l.path("pod-logs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	files := map[string]string{
		l.path("containerd.toml"): containerdConfig(l),
		l.path("kubelet.yaml"):    kubeletConfig(l),
	}
	conflist, err := cniConfig(l)
	if err != nil {
		return err
	}
	files[l.path("cni", "net.d", "10-accelstack.conflist")] = conflist
	for path, content := range files {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// containerdConfig is containerd's config (version 2, which containerd 1.6
// reads and 2.x migrates). The CRI plugin must not lower oom_score_adj:
// hosts without CAP_SYS_RESOURCE (VMs, nested sandboxes) make runc fail
// with "can't get final child's PID from pipe" otherwise.
func containerdConfig(l layout) string {
	return fmt.Sprintf(`version = 2
root = %q
state = %q
[grpc]
  address = %q
[plugins."io.containerd.internal.v1.opt"]
  path = %q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
`, l.path("containerd"), l.path("run", "containerd-state"), l.containerdSocket(), l.path("containerd", "opt"),
		PauseImage, cniBinDir, l.path("cni", "net.d"))
}

// cniConfig is the pod network: the cluster's bridge as the pods' gateway,
// with no masquerade, so pods reach the host's bridge addresses and
// nothing else.
func cniConfig(l layout) (string, error) {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "accelstack",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": Bridge, "isGateway": true, "ipMasq": false,
				"ipam": map[string]any{
					"type": "host-local", "dataDir": l.path("cni", "ipam"),
					"ranges": [][]map[string]string{{{"subnet": PodCIDR, "gateway": GatewayIP}}},
					"routes": []map[string]string{{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{"type": "loopback"},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	return string(b), err
}

// kubeletConfig is the KubeletConfiguration. cgroupfs because the host may
// run no systemd; failCgroupV1 false for cgroup v1 hosts; no iptables
// chains (they would outlive the kubelet); eviction and image GC
// thresholds that a busy developer disk does not trip (images are imported,
// not pulled, so a collected image could not come back); node status every
// 2s rather than 10s, so a device turning unhealthy shows in allocatable
// at once; pods resolve names through the cluster's DNS server.
func kubeletConfig(l layout) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
nodeStatusUpdateFrequency: 2s
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
makeIPTablesUtilChains: false
containerRuntimeEndpoint: unix://%s
podLogsDir: %s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
  nodefs.inodesFree: 1%%
clusterDNS: [%s]
clusterDomain: %s
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %s}
authorization: {mode: Webhook}
`, GatewayIP, l.containerdSocket(), filepath.Join(l.path("pod-logs")), GatewayIP, ClusterDomain, l.pki("ca.crt"))
}
