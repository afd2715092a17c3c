// Package elasticjob tests the DLRover ElasticJob controller against real
// parts: a real kube-apiserver and etcd with the project's CRDs and the
// ElasticJob webhook, and the controllers in-process. The tests play the
// kubelet by writing pod status. It is a package of its own so that its
// control plane serves only these tests.
package elasticjob
