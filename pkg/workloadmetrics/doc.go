// Package workloadmetrics exports, on the controllers' metrics endpoint,
// the state of the platform's workloads that the T9k alerts read, in the
// manner of kube-state-metrics: one series per workload and metric, read
// from the controllers' caches at each scrape.
//
//	accelstack_workload_phase{kind, namespace, name, phase}       1 for the current phase
//	accelstack_workload_ready{kind, namespace, name}              1 when ready, else 0
//	accelstack_workload_ready_since_timestamp_seconds{kind, namespace, name}
//	                                                             when readiness last changed
//	accelstack_workload_paused{kind, namespace, name}             1 when paused or suspended
//
// The kinds are the T9k Jobs, Notebooks, TensorBoards, SimpleMLServices
// and MLServices (Kinds). A kind whose CRD is not installed is skipped.
package workloadmetrics
