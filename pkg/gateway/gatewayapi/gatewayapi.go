// Package gatewayapi is the contract between the gateway and its clients
// (the t9k CLI, t9k-pf, the consoles): the paths of the gateway's own
// APIs, the shape of its login tokens and the bodies of a password
// login. It is a leaf importing only the standard library, so a client
// links none of the gateway.
package gatewayapi

import "time"

// Paths the gateway serves.
const (
	// KubernetesPath serves the Kubernetes API as the caller: a request
	// to KubernetesPath+"/api/v1/..." is the API server's "/api/v1/...".
	KubernetesPath = "/t9k/kubernetes"
	// LoginPath starts a browser login (GET), or logs in with a password
	// (POST of a PasswordLogin as JSON, answered by a TokenAnswer).
	LoginPath = "/t9k/security/server/apis/v1/login"
	// BuildConsolePath is the Build Console's pages.
	BuildConsolePath = "/t9k/build-console/"
	// KeysPath is the API of a user's API keys.
	KeysPath = "/t9k/security/server/apis/v1/apikeys"
	// LogoutPath ends a browser login.
	LogoutPath = "/t9k/security/server/apis/v1/logout"
	// SessionPath answers a browser login's user, groups, expiry and
	// CSRF token as JSON (401 without one).
	SessionPath = "/t9k/security/server/apis/v1/session"
	// ProjectsPath answers the caller's projects (GET, a ProjectList),
	// and serves each project's members under ProjectsPath/<project>.
	ProjectsPath = "/t9k/security/server/apis/v1/projects"
)

// CSRFHeader carries a browser login's CSRF token on requests that change
// state.
const CSRFHeader = "X-CSRF-Token"

// Project is a project of the caller, with the scopes they work in.
type Project struct {
	Name string `json:"name"`
	// Scopes are the caller's scopes in the project (build, deploy),
	// their own and their groups'.
	Scopes []string `json:"scopes"`
	// Admin tells whether the caller, or a group of theirs, is the
	// project's admin.
	Admin bool `json:"admin,omitempty"`
}

// ProjectList answers ProjectsPath.
type ProjectList struct {
	Items []Project `json:"items"`
}

// TokenPrefix starts a login token: a login the gateway issued to a
// client that logged in with a password, sent as
// "Authorization: Bearer <token>".
const TokenPrefix = "t9k_"

// PasswordLogin is the body of a password login.
type PasswordLogin struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// TokenAnswer answers a password login.
type TokenAnswer struct {
	Token   string    `json:"token"`
	User    string    `json:"user"`
	Groups  []string  `json:"groups,omitempty"`
	Expires time.Time `json:"expires"`
}
