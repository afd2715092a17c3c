// Package queues tests the queue controllers and the queue admission
// webhook against real parts: a real kube-apiserver and etcd with the
// project's CRDs and the webhook configuration of deploy/controllers, and
// the controllers in-process. The tests bind pods and write their status as
// the scheduler and the kubelet would. It is a package of its own so that
// its control plane serves only these tests.
package queues
