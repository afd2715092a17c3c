// Package interactive tests the TensorBoard and Explorer controllers and
// their webhook against a real kube-apiserver and etcd with the project's
// CRDs, the webhook of deploy/controllers/interactive-webhook.yaml and the
// controllers in-process. There is no kube-controller-manager nor kubelet:
// the tests play them, creating the pods of the Deployments the
// controllers write and writing their status.
package interactive
