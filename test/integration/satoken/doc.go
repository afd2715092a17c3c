// Package satoken tests the ServiceAccountToken controller against a real
// kube-apiserver and etcd, whose TokenRequest API signs tokens with the
// service-account key envtest configures, with the controller telling the
// time by a fake clock.
package satoken
