// Package reclaim is the Resource Keeper: in the namespaces that opt in, it
// probes the activity of Notebooks, TensorBoards and Explorers (Jupyter's
// API, the activity sidecar, SSH sessions, GPU utilization in the node
// agent's metrics), sets their Idle condition and suspends those idle for
// too long, recording each decision with its evidence.
//
// A namespace opts in by the label tensorstack.dev/resource-keeper=enabled;
// its admin sets the thresholds by annotations of the Namespace
// (tensorstack.dev/idle-after, tensorstack.dev/suspend-after,
// tensorstack.dev/gpu-utilization-threshold), which the project's users
// cannot change. An invalid annotation is reported by an event on the
// Namespace and its default applies.
//
// Every probe period the Keeper reads, for each running pod of each
// workload that is not suspended:
//
//   - the pod's start, which counts as activity: starting or resuming a
//     workload is its user's act;
//   - the activity sidecar's report (activity.Report at
//     http://<pod IP>:8080/.t9k/activity): the last client request and the
//     SSH sessions;
//   - for a Jupyter notebook, Jupyter's /api/status (last_activity) and
//     /api/kernels (a busy kernel is activity), through the sidecar, at the
//     notebook's base path (NB_PREFIX), with JUPYTER_TOKEN when set;
//   - for a pod holding GPUs or NPUs, their utilization in the metrics of
//     the node agent on the pod's node (DCGM_FI_DEV_GPU_UTIL or
//     npu_chip_info_utilization with the pod's labels): a device above the
//     namespace's threshold is activity. The Keeper remembers when it last
//     saw the device busy and since when it has been watching, so that it
//     says "GPU at most 0% for 1h" only of the time it watched.
//
// A source that cannot be read is evidence unknown, never idle. The
// workload is active when any source saw activity within idle-after; Idle
// when none did and every required source (the sidecar, and the GPUs when
// measurable) was read and has watched for all of idle-after, or since the
// pod started; otherwise the Keeper cannot tell, and the Idle condition
// keeps its status. Jupyter's API is not required: the spec falls back to
// the sidecar when it fails.
//
// The Idle condition is written through the status subresource with its
// lastProbeTime at every probe and its lastTransitionTime at each change of
// status; with it, a Notebook's status.ssh.lastSshClientActivity follows
// the sidecar's last SSH data. A workload Idle for suspend-after gets spec.suspend=true, and
// its controller deletes its pods; a user resumes it by clearing
// spec.suspend, and the new pod's start is activity. RStudio notebooks are
// never idle. Each change (Idle, active again, suspended) is an event whose
// note names the evidence, e.g. "Idle, no activity for 1h2m (suspended
// after 24h Idle): no request for 1h2m, no SSH for 1h2m, GPU at most 0% for
// 1h, kernels idle, Jupyter last active 1h5m ago".
package reclaim

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=notebooks;tensorboards;explorers,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=notebooks/status;tensorboards/status;explorers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
