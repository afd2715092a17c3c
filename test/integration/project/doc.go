// Package project tests the Project and QuotaProfile controller and the
// Project webhook against a real kube-apiserver and etcd with the
// project's CRDs, the webhook configuration of deploy/controllers and the
// controllers in-process. No kube-controller-manager runs, so a deleted
// namespace stays Terminating and quotas report no usage.
package project
