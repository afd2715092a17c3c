// Package t9kcli tests the t9k command line against a real kube-apiserver
// and etcd with the project's CRDs: each verb run in-process, as a user
// types it, with the control plane's kubeconfig. The tests write the
// objects' status as the controllers and the kubelet would.
package t9kcli
