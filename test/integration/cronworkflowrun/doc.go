// Package cronworkflowrun tests the CronWorkflowRun controller against a
// real kube-apiserver and etcd with the project's CRDs. Each test runs the
// controller in-process on a manager of its own, watching only the test's
// namespace, with a fake clock the test steps from one scheduled time to the
// next; stopping that manager and starting another on the same clock is a
// restart of the controller. No WorkflowRun controller runs: the tests play
// it by writing the runs' status.phase through the status subresource. It is
// a package of its own so that its control plane serves only these tests.
package cronworkflowrun
