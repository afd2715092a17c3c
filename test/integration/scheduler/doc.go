// Package scheduler tests the T9k Scheduler against real parts: a real
// kube-apiserver and etcd with the project's CRDs and the scheduler binary
// of cmd/scheduler running the configuration of deploy/scheduler, beside the
// controllers (the jobs engine, the Queue and PodGroup status). Nodes are
// API objects with the capacity a test gives them; the tests play the
// kubelet where one is needed, by finishing the deletion of pods the
// scheduler preempted. Each case has nodes of its own, reached only through
// its queues' nodeSelector, so the cases run in parallel on one scheduler.
package scheduler
