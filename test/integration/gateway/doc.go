// Package gateway tests the gateway against a real kube-apiserver and
// etcd: real ServiceAccount tokens (TokenReview), the real project roles
// and RBAC (SubjectAccessReview), the gateway running with only the rights
// deploy/gateway gives it, and API keys stored as real Secrets.
package gateway
