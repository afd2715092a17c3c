// Package workflows tests the WorkflowRun controller and the workflow
// webhook against real parts: a real kube-apiserver and etcd with the
// project's CRDs and the webhook of deploy/controllers, and the controllers
// in-process (the T9k Jobs engine included). The tests play the kubelet by
// writing pod status, the step sequencer's termination messages included.
package workflows
