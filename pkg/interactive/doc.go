// Package interactive is the workload layer of the controllers that run a
// server for a user behind the platform's web entry: Notebook, TensorBoard
// and Explorer, and, for their objects and conditions, the serving
// controllers (SimpleMLService, MLService).
//
// It holds:
//   - the objects and their writing: Writer creates each Deployment,
//     StatefulSet, Service and NetworkPolicy of a workload, controlled by
//     it, and rewrites one only when the hash of its spec
//     (SpecHashAnnotationKey, SpecHash) changes; ErrStale and ErrNotOwned
//     are what a create that finds the name taken means. Workload is the
//     Deployment and Service of one server behind the activity sidecar
//     (TensorBoard, Explorer); a Notebook's StatefulSet and Services are
//     its own, written by the same Writer;
//   - access: the access Secret whose token the sidecar requires, and the
//     NetworkPolicy that admits only the platform's namespaces;
//   - state: Observe reads a workload's phase from its Deployment and pod;
//     the condition helpers (FindCondition, SetCondition, RemoveCondition)
//     are the one set for WorkloadConditions, a TensorBoard's included
//     through FromTensorBoardConditions;
//   - the controller around them: Reconcile, the prologue and the status
//     write every reconcile of these kinds shares; NewCache and
//     WatchWorkloads, the cache and the watches of the workloads' objects;
//     Validator, the admission webhook of a kind; the names (ObjectName,
//     AppLabels, URLs).
//
// The name is the family's: the Notebooks, TensorBoards and Explorers of
// docs/interactive.md.
package interactive
