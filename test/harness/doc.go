// Package harness starts the real parts that accelstack's tests run against
// on a machine with no cluster, no accelerator and no internet: a real
// kube-apiserver and etcd with the project's CRDs (envtest), optionally a real
// kube-controller-manager beside them, and a real S3 server (versitygw). For
// fast unit tests it also offers an in-process S3 fake (gofakes3).
//
// The binaries come from the cache that hack/envtest-assets.sh and the
// Makefile fill (make tools envtest-assets); a missing binary fails the test
// with the command that provides it. Every part is stopped and its files are
// removed by t.Cleanup.
package harness
