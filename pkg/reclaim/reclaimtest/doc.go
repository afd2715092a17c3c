// Package reclaimtest has the fakes the Resource Keeper's tests probe: a
// workload pod's activity sidecar and Jupyter server, a node agent on a
// simulated GPU machine, and a network that routes the pods' addresses to
// them.
package reclaimtest
