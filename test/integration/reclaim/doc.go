// Package reclaim tests the Resource Keeper against a real kube-apiserver
// and etcd with the project's CRDs. Each test runs the Keeper alone on a
// manager of its own with a fake clock it steps a probe period at a time,
// and plays the rest: the Notebook controller (a Notebook's pod and its
// status.pod), the kubelet (pod status), the activity sidecar and Jupyter
// (reclaimtest.Pod), and the node agent (the real one on a simulated DGX
// A100, with a pod of its own labelled as the DaemonSet's), reached at the
// pods' IPs through a test network. It is a package of its own so that its
// control plane serves only these tests.
package reclaim
