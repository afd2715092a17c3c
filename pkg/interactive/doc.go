// Package interactive holds what the controllers of the interactive
// workloads (TensorBoard, Explorer) share: the names of their objects, the
// Deployment and Service each workload runs behind the activity sidecar,
// the workload's state read from its Deployment and pod, the T9k
// Scheduler's fields, and the admission webhook that refuses invalid specs.
package interactive
