// Package login is the gateway's browser login: an OpenID Connect relying
// party of the site's identity provider (Ory Hydra), and that provider's
// login, consent and logout app, which checks passwords against the
// site's directory.
//
// A browser that opens a workload without a session is sent to LoginPath,
// which starts an authorization-code flow with PKCE at the provider. The
// provider asks the login app (LoginAppPath) who the user is: the app
// shows a form, checks the password with a directory.Directory and
// accepts the login with the user's groups, which the consent app
// (ConsentAppPath) puts into the ID token. Back at CallbackPath the
// gateway redeems the code, verifies the ID token and its nonce, and sets
// the session cookie: the user, their groups, an expiry and a CSRF token,
// sealed with AES-GCM under the gateway's session key. The cookie is
// HttpOnly, Secure and SameSite=Lax, and never reaches a workload.
package login
