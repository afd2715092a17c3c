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
	// KeysPath is the API of a user's API keys.
	KeysPath = "/t9k/security/server/apis/v1/apikeys"
)

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
