// Package console serves the platform's web consoles: a single-page front
// end, embedded in the binary (web/), at the consoles' paths on the
// gateway's host (the Build Console at BuildPrefix).
//
// The pages hold no rights of their own. The browser reads and changes
// objects through the gateway's Kubernetes API (gatewayapi.KubernetesPath)
// with the user's login session, so that every call is the user's: the
// gateway impersonates them and the API server's RBAC decides. Lists are
// served by the API server's watch cache and kept current by a watch per
// kind the page shows, so a page never polls.
//
// The front end is Preact with htm templates, ES modules loaded through
// an import map: no build step beyond copying the packages' files out of
// the npm tarballs that web/package-lock.json pins (hack/npmvendor).
package console
