// Package notebook tests the Notebook controller and its webhook against a
// real kube-apiserver and etcd with the project's CRDs, the webhook
// configuration of deploy/controllers and the controllers in-process. No
// kube-controller-manager runs: the tests play the StatefulSet controller
// and the kubelet by creating the notebook's pod and writing its status.
// It is a package of its own so that its control plane serves only these
// tests.
package notebook
