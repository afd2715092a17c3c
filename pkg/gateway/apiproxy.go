package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/gateway/apikey"
	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
	"github.com/accelstack/accelstack/pkg/gateway/kubeapi"
	"github.com/accelstack/accelstack/pkg/gateway/login"
	"github.com/accelstack/accelstack/pkg/members"
)

// KubernetesPath is where the gateway serves the Kubernetes API to the
// platform's clients (the t9k CLI, t9k-pf, the consoles): a request to
// KubernetesPath+"/api/v1/..." goes to the API server's "/api/v1/...",
// made as the caller.
const KubernetesPath = gatewayapi.KubernetesPath

// KubernetesResource is the resource label of the Kubernetes API's
// requests in the gateway's metrics.
const KubernetesResource Resource = "kubernetes"

// discovery is what an API key may read beside its scopes' resources: the
// API's discovery, version and OpenAPI documents, which clients read
// before anything else.
var discovery = rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/version", "/openapi/*"}}

// APIProxy passes Kubernetes API requests on to the API server as their
// caller. A Kubernetes token goes through as it came, and the API server
// authenticates it; the gateway's own credentials (an API key, a login
// token, a browser session) become the user they stand for, by
// impersonation. A request with an API key must also fall within the
// rules of the key's scopes (the project roles): its rights are the
// user's and the key's both.
type APIProxy struct {
	// Server is the API server's URL.
	Server        *url.URL
	Authenticator Authenticator
	// Client reads the project roles, the rules of the API keys' scopes.
	Client client.Reader
	Log    logr.Logger

	proxy *httputil.ReverseProxy
	roles *ttlCache[members.Scope, []rbacv1.PolicyRule]
}

// NewAPIProxy returns the proxy. own carries the requests that
// impersonate, with the gateway's credential; anonymous those with the
// caller's token, with no credential of the gateway's. Both must speak
// HTTP/1.1, so that upgrades (exec, port-forward) go through. ttl bounds
// how long a scope's rules are kept.
func NewAPIProxy(server *url.URL, own, anonymous http.RoundTripper, authn Authenticator, c client.Reader, ttl time.Duration, log logr.Logger) *APIProxy {
	p := &APIProxy{Server: server, Authenticator: authn, Client: c, Log: log, roles: newTTLCache[members.Scope, []rbacv1.PolicyRule](ttl, len(members.Scopes))}
	rt := roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		if r.Header.Get("Impersonate-User") != "" {
			return own.RoundTrip(r)
		}
		return anonymous.RoundTrip(r)
	})
	p.proxy = &httputil.ReverseProxy{Rewrite: p.rewrite, Transport: rt, ErrorHandler: p.proxyError}
	return p
}

// roundTripperFunc is a function that is an http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

// RoundTrip implements http.RoundTripper.
func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// impersonated is the context key of the user a request is made as; nil
// passes the caller's own Authorization on.
const impersonatedKey ctxKey = 1

// ServeHTTP implements http.Handler.
func (p *APIProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, KubernetesPath)
	if path == "" || path[0] != '/' || strings.Contains(path, "/../") || strings.HasSuffix(path, "/..") || strings.Contains(r.URL.RawPath, "%2") {
		http.Error(w, "400 bad path", http.StatusBadRequest)
		return
	}
	if q := QueryCredential(r); q != "" {
		http.Error(w, "credentials are not accepted in the query string ("+q+"): send Authorization: Bearer", http.StatusBadRequest)
		return
	}
	var user *User
	if cred, ok := bearer(r); !ok || isGatewayCredential(cred) {
		u, err := p.Authenticator.Authenticate(r.Context(), r)
		if err != nil {
			authnError(w, p.Log, err)
			return
		}
		if why := csrfRefusal(r, u); why != "" {
			http.Error(w, "forbidden: "+why, http.StatusForbidden)
			return
		}
		if u.Scopes != nil {
			if ok, why, err := p.withinScopes(r.Context(), u, r, path); err != nil {
				p.Log.Error(err, "Reading the scopes' rules failed")
				http.Error(w, "authorization is unavailable", http.StatusServiceUnavailable)
				return
			} else if !ok {
				http.Error(w, "forbidden: "+why, http.StatusForbidden)
				return
			}
		}
		user = u
	}
	p.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), impersonatedKey, user)))
}

// isGatewayCredential reports whether a bearer credential is one the
// gateway issued (an API key or a login token), which the API server
// does not know.
func isGatewayCredential(cred string) bool {
	return strings.HasPrefix(cred, login.TokenPrefix) || apikey.Shaped(cred)
}

// withinScopes reports whether an API key's scopes reach the request, and
// why not.
func (p *APIProxy) withinScopes(ctx context.Context, u *User, r *http.Request, path string) (bool, string, error) {
	a := kubeapi.Read(r.Method, path, r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1")
	if kubeapi.Allowed([]rbacv1.PolicyRule{discovery}, a) {
		return true, "", nil
	}
	if !a.Resource || a.Namespace == "" {
		return false, fmt.Sprintf("an API key reaches only the resources of its scopes in a project, not %s %s", a.Verb, a.Path), nil
	}
	for _, s := range u.Scopes {
		rules, err := p.roles.load(ctx, s, func(ctx context.Context) ([]rbacv1.PolicyRule, error) {
			var role rbacv1.ClusterRole
			if err := p.Client.Get(ctx, client.ObjectKey{Name: members.ClusterRole(s)}, &role); err != nil {
				return nil, fmt.Errorf("reading ClusterRole %s: %w", members.ClusterRole(s), err)
			}
			return role.Rules, nil
		})
		if err != nil {
			return false, "", err
		}
		if kubeapi.Allowed(rules, a) {
			return true, "", nil
		}
	}
	res := a.Kind
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	return false, fmt.Sprintf("the API key's scopes %v do not allow %s on %s", u.Scopes, a.Verb, res), nil
}

// impersonationHeaders are the request headers that make the API server
// act as another user; a client's own are removed.
var impersonationHeaders = []string{"Impersonate-User", "Impersonate-Uid", "Impersonate-Group"}

// rewrite sends a request to the API server, as its user: with the
// caller's token, or impersonating the user of the gateway's credential
// with the gateway's own.
func (p *APIProxy) rewrite(pr *httputil.ProxyRequest) {
	out := pr.Out
	out.URL.Scheme, out.URL.Host = p.Server.Scheme, p.Server.Host
	out.URL.Path = strings.TrimSuffix(p.Server.Path, "/") + strings.TrimPrefix(pr.In.URL.Path, KubernetesPath)
	out.URL.RawPath = ""
	out.Host = p.Server.Host
	for k := range out.Header {
		if strings.HasPrefix(k, "Impersonate-Extra-") {
			out.Header.Del(k)
		}
	}
	for _, h := range impersonationHeaders {
		out.Header.Del(h)
	}
	out.Header.Del("Cookie")
	u, _ := pr.In.Context().Value(impersonatedKey).(*User)
	if u == nil {
		return
	}
	out.Header.Del("Authorization")
	out.Header.Set("Impersonate-User", u.Name)
	for _, g := range impersonableGroups(u.Groups) {
		out.Header.Add("Impersonate-Group", g)
	}
}

// impersonableGroups returns the groups the gateway acts in for a user:
// all but the system groups that no directory or API key should confer
// (system:masters, system:nodes, ...); the groups every authenticated
// user and ServiceAccount has stay.
func impersonableGroups(groups []string) []string {
	var out []string
	for _, g := range groups {
		if !strings.HasPrefix(g, "system:") || g == authenticatedGroup || g == "system:serviceaccounts" || strings.HasPrefix(g, "system:serviceaccounts:") {
			out = append(out, g)
		}
	}
	return out
}

// proxyError answers a request the API server did not answer.
func (p *APIProxy) proxyError(w http.ResponseWriter, _ *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	p.Log.Info("The API server did not answer", "error", err.Error())
	http.Error(w, "the API server did not answer", http.StatusBadGateway)
}
