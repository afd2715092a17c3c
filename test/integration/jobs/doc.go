// Package jobs tests the T9k job controllers against real parts: a real
// kube-apiserver and etcd with the project's CRDs and the jobs' validating
// webhook, a real kube-controller-manager, and the controllers in-process.
// The tests play the kubelet by writing pod status. It is a package of its
// own so that its control plane serves only these tests.
package jobs
