// Package integration holds the tests that run accelstack's APIs and
// components against real parts: kube-apiserver and etcd with the project's
// CRDs, kube-controller-manager, and a real S3 server.
package integration
