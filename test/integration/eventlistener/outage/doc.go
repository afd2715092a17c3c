// Package outage tests that an event an EventListener acknowledged
// survives an outage of the API server its WorkflowTrigger creates runs
// in. It runs the listener and trigger servers of workflow-events
// in-process against a real etcd and kube-apiserver, stops the
// kube-apiserver for over a minute and starts it again on the same port
// with the same certificates and etcd. It is a package of its own so that
// no other test shares the control plane it takes down.
package outage
