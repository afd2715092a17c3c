// Package queue is the T9k Scheduler's model of a Queue: which queue a pod
// belongs to, what it asks of the queue, and whether the queue may take it
// (open, the namespace allowed, within a resource shape and within the
// quota). The scheduler's plugins and the controllers' admission webhook
// decide through this one package, so a workload refused at creation is
// exactly one the scheduler would hold back, with the same message.
//
// The package depends on the Kubernetes API types only, not on the
// scheduler framework, so every binary that needs the rules can link them.
package queue
