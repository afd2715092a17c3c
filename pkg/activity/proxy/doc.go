// Package proxy is the activity sidecar (cmd/activity-proxy): it stands in
// front of the HTTP entry and the SSH server of a Notebook, TensorBoard or
// Explorer pod and records what clients do, for the Resource Keeper to
// read at activity.ReportPath.
//
// On activity.HTTPPort a reverse proxy (net/http/httputil) passes every
// request, upgrades such as websockets included, to the workload's port
// with the request's Host header, and records the time of each request.
// On a websocket it records the time of each data frame the client sends,
// not of the control frames (ping, pong, close), so an open but idle
// connection, such as a Jupyter kernel's kept alive by pings, is not
// activity. On other upgraded connections any byte from the client is.
// Requests that carry activity.ProbeHeader are proxied without being
// counted. The sidecar answers activity.ReportPath, HealthzPath and
// ReadyzPath itself.
//
// With an access token (Config.AccessTokenFile, --access-token-file, which
// the controllers always set to the workload's access Secret), a request
// is proxied only when it carries the token as "Authorization: Bearer
// <token>", as the cookie activity.AccessCookie or as the query parameter
// activity.AccessQueryParam, compared in constant time, or when its TCP
// peer is the pod's loopback: kubectl port-forward, which the API server
// authorizes (pods/portforward), and the pod's other containers. Others
// get 401 and never reach the workload, websocket upgrades included. A GET
// with the token in the query is answered with a redirect to the same URL
// without it, setting the cookie (HttpOnly, SameSite=Lax, Path=/), so that
// a browser opens a link once. The credential that matched is removed
// before proxying; the client's other cookies and a credential of the
// workload's own (a Jupyter token) pass. The sidecar's own paths need no
// token: kubelet probes them, and the report holds only times and a
// count. The token is read once, at the start: a rotated Secret takes a
// restart of the pod.
//
// On activity.SSHPort it forwards TCP connections to the SSH server,
// counting the open sessions and recording when a client last sent data
// (SSH is encrypted: a client's keep-alive counts too).
//
// Memory is bounded: the number of HTTP connections and SSH sessions is
// capped, request and response bodies are streamed, and the state is a
// few counters.
package proxy
