// Package activity is the contract between the activity sidecar, which
// stands in front of the HTTP entry (and the SSH port) of a Notebook,
// TensorBoard or Explorer pod, and the controllers that run and read it:
// the ports and their names, the paths, the access credential, the report
// and the default image. It is a leaf importing only the standard library,
// so that the sidecar (cmd/activity-proxy) links no Kubernetes API; the
// controllers build the sidecar's container with package
// pkg/activity/sidecar.
package activity

import "time"

// ContainerName is the name of the sidecar container in a workload's pod.
const ContainerName = "activity"

// The sidecar's ports.
const (
	// HTTPPort is where the sidecar serves the workload's HTTP entry,
	// proxied to the workload's own port; the workload's Service targets it.
	HTTPPort = 8080
	// SSHPort is where the sidecar forwards SSH connections to the
	// workload's sshd (port 22 of the pod), counting the sessions.
	SSHPort = 2222
)

// ReportPath is the path, on HTTPPort, where the sidecar answers with its
// Report as JSON; it is not proxied.
const ReportPath = "/.t9k/activity"

// The sidecar's health paths on HTTPPort, answered by the sidecar itself
// and never proxied.
const (
	// HealthzPath answers 200 while the sidecar runs (liveness).
	HealthzPath = "/.t9k/healthz"
	// ReadyzPath answers 200 while the workload's port takes connections
	// (readiness), 503 otherwise.
	ReadyzPath = "/.t9k/readyz"
)

// ProbeHeader is a request header that, set to any value on a request to
// HTTPPort, makes the sidecar proxy the request without counting it as
// activity: for readers of the workload's own status API, such as the
// Resource Keeper asking Jupyter's /api/status. The sidecar removes it
// before proxying.
const ProbeHeader = "X-T9k-Activity-Probe"

// The workload's access credential. The sidecar proxies a request to the
// workload only when it carries the token of the workload's access Secret
// (AccessTokenKey), as "Authorization: Bearer <token>", as the cookie
// AccessCookie or as the query parameter AccessQueryParam, or when it
// comes from the pod's loopback (kubectl port-forward, the pod's other
// containers). The sidecar's own paths (ReportPath, HealthzPath,
// ReadyzPath) need no token.
const (
	// AccessTokenKey is the key of the access Secret that holds the token.
	AccessTokenKey = "token"
	// AccessTokenDir is where the sidecar mounts the access Secret,
	// read-only; the token is the file AccessTokenKey in it.
	AccessTokenDir = "/var/run/t9k/access"
	// AccessCookie is the cookie that carries the token.
	AccessCookie = "t9k-access"
	// AccessQueryParam is the query parameter that carries the token: the
	// sidecar answers a GET carrying it with a redirect to the same URL
	// without it, setting AccessCookie, so that a browser opens a link
	// once and keeps the cookie.
	AccessQueryParam = "t9k-token"
)

// The names of the sidecar's container ports; a workload's Service targets
// HTTPPortName.
const (
	HTTPPortName = "http"
	SSHPortName  = "ssh"
)

// SidecarUser is the user and group the sidecar runs as.
const SidecarUser = 65532

// AccessVolumeName is the name of the pod volume of the access Secret,
// which only the sidecar mounts.
const AccessVolumeName = "t9k-activity-access"

// DefaultImage is the image of the activity sidecar, the controllers'
// default for --activity-image.
const DefaultImage = "ghcr.io/accelstack/activity-proxy:latest"

// Report is what the sidecar has seen.
type Report struct {
	// Since is when the sidecar started.
	Since time.Time `json:"since"`
	// LastRequest is the last HTTP request from a client, or the last data
	// a client sent on an upgraded connection (a websocket); nil when none.
	LastRequest *time.Time `json:"lastRequest,omitempty"`
	// SSHSessions is the number of SSH connections open now.
	SSHSessions int `json:"sshSessions"`
	// LastSSH is when an SSH client last sent data; nil when none.
	LastSSH *time.Time `json:"lastSSH,omitempty"`
}
