// Package explorer is the Explorer controller: on the PVC an Explorer
// names, a file browser and code-server, each a Deployment of one pod
// behind the activity sidecar with its Service; suspend and resume; the
// Explorer's status, a missing PVC included; and the admission webhook of
// Explorers.
package explorer
