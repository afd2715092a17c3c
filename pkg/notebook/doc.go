// Package notebook is the Notebook controller (tensorstack.dev/v1beta1)
// and its admission webhook.
//
// For each Notebook it keeps, all named after a hash of the Notebook's UID
// (ObjectName: managed-notebook-<8 hex digits>) and labelled with
// NotebookLabelKey:
//
//   - a StatefulSet of one pod (<name>-0; no pod while spec.suspend is
//     true or spec.runMode is suspended) from spec.template.spec: the main
//     container (named notebook, or else the first) gets NB_PREFIX, the
//     URL path Jupyter serves under (URLPrefix), the pod's fsGroup
//     defaults to the notebook images' user (1000) so that a fresh PVC is
//     writable, the T9k Scheduler's fields are set from spec.scheduler, and
//     the activity sidecar (cmd/activity-proxy) is added in front of the
//     server's port: 8888 for Jupyter, 8787 for RStudio;
//   - a Service of the same name, port 80 to the sidecar's port 8080;
//   - with spec.ssh.enabled, a Service <name>-ssh of spec.ssh.serviceType,
//     port 22 to the sidecar's SSH port 2222, and the public keys of the
//     Secrets that spec.ssh.authorized_keys names projected read-only into
//     the notebook container at SSHKeysDir.
//
// Its status gives the phase, the pod, the SSH Service, the URL, the Ready
// condition from the pod, and the SSHReady condition from the authorized
// keys' Secrets; the Idle condition is the Resource Keeper's and is left
// as it is. The StatefulSets, Services and pods are watched in a cache of
// their own, restricted to NotebookLabelKey; the Secrets are read from the
// API server when a Notebook is reconciled, never cached.
package notebook
