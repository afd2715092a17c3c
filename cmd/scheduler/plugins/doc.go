// Package plugins adapts the T9k Scheduler's rules (pkg/scheduler/...) to
// the kube-scheduler framework: a queue sort, queue admission, gang
// scheduling and queue preemption, registered by name for a
// KubeSchedulerConfiguration profile. The rules themselves live in the main
// module, where the controllers' admission webhook shares them; this
// package is only the glue, so k8s.io/kubernetes stays out of every binary
// but the scheduler.
package plugins
