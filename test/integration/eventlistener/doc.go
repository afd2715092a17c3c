// Package eventlistener tests the EventListener and WorkflowTrigger
// controllers against a real kube-apiserver and etcd with the project's
// CRDs and the controllers in-process, the tests playing the deployment
// controller by writing Deployment status. It also runs the listener and
// trigger servers of workflow-events in-process, the trigger creating
// WorkflowRuns in the API server as a service account that a Role lets
// create them, configured from the Deployment the controller wrote. It is
// a package of its own so that its control plane serves only these tests.
package eventlistener
