// Package interactive holds what the controllers of the interactive
// workloads (TensorBoard, Explorer) share: the names of their objects, the
// Deployment and Service each workload runs behind the activity sidecar,
// the workload's state read from its Deployment and pod, the T9k
// Scheduler's fields, and the admission webhook that refuses invalid specs.
// It also holds, for these and for Notebooks, what keeps a workload's web
// entry to its owner: the access Secret whose token the sidecar requires,
// and the NetworkPolicy that admits only the platform's namespaces.
package interactive
