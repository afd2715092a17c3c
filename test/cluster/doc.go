// Package cluster runs a real single-node Kubernetes on this machine, with
// no Docker, no registry and no network beyond the host: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kubelet built
// from the Go module proxy (hack/envtest-assets.sh), containerd and runc
// from Debian, the CNI bridge plugin, kube-router's network-policy
// controller (a pinned tool, so that NetworkPolicies are enforced), and
// OCI image tarballs built on the spot (package ociimage; the accelstack images as package images defines
// them) and imported into containerd.
//
// Everything listens on loopback or on two host-internal addresses of the
// cluster's own bridge: 10.244.0.1, the node and pod gateway, and 10.0.0.1,
// the ClusterIP of the kubernetes Service, on which kube-apiserver itself
// listens. With no kube-proxy, pods thus reach the API server through the
// standard in-cluster configuration, and the API server reaches webhook
// pods at their endpoint addresses (--enable-aggregator-routing).
//
// Up is idempotent (a running cluster is left alone, a crashed one is
// cleaned up first) and Down leaves the host as Up found it: every process
// stopped by its recorded PID, mounts, the bridge, cgroups, iptables
// chains and ipsets removed, the kubelet's sysctls restored, and the host paths that
// did not exist before removed. Snapshot and Diff check that.
package cluster
