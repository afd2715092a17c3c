// Package workloadmetrics tests the workload metrics and the alert rules
// of deploy/monitoring that read them: a manager with the metrics
// collector runs against a real kube-apiserver and etcd holding workloads
// whose status the test writes; its metrics endpoint is scraped, linted
// with promtool, replayed through `promtool test rules`, and scraped by a
// real Prometheus that evaluates the rules.
package workloadmetrics
