package gateway

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/gateway/apikey"
	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
	"github.com/accelstack/accelstack/pkg/gateway/login"
)

// Paths the gateway answers itself.
const (
	HealthzPath = "/healthz"
	ReadyzPath  = "/readyz"
	// KeysPath is the API of a user's API keys, under the security
	// server's prefix.
	KeysPath = gatewayapi.KeysPath
)

// Gateway is the HTTP handler of the gateway: it routes each request to a
// workload, authenticates and authorizes it, and proxies it there with
// the workload's access token instead of the user's credential.
type Gateway struct {
	Router        Router
	Authenticator Authenticator
	Authorizer    Authorizer
	Resolver      *Resolver
	Keys          *apikey.Store
	// Client is the gateway's own API client, which the members API
	// reviews access and writes member RoleBindings with; nil serves no
	// members API.
	Client client.Client
	// Login is the browser login; nil serves none, and the Authenticator
	// then knows no sessions.
	Login *login.Login
	// Provider serves the identity provider's public endpoints under
	// login.ProviderPath; nil serves none.
	Provider http.Handler
	// API serves the Kubernetes API at KubernetesPath; nil serves none.
	API http.Handler
	// Console is the console server, which serves ConsolePaths; nil
	// serves no console.
	Console *url.URL
	// Transport carries the proxied requests.
	Transport http.RoundTripper
	Log       logr.Logger
	// Metrics counts the requests; nil counts none.
	Metrics *Metrics

	proxy *httputil.ReverseProxy
}

// ctxKey is the type of the gateway's request context keys.
type ctxKey int

// targetKey holds the *target of a proxied request.
const targetKey ctxKey = 0

// target is what the proxy needs of a request: where it goes and with
// which token.
type target struct {
	route    Route
	upstream Upstream
}

// Handler returns the gateway's handler.
func (g *Gateway) Handler() http.Handler {
	g.proxy = &httputil.ReverseProxy{
		Rewrite:   rewrite,
		Transport: g.Transport,
		// No FlushInterval: ReverseProxy flushes a streamed response (no
		// Content-Length, or text/event-stream) after every write anyway,
		// and WebSocket upgrades bypass it; -1 would also flush each
		// response's headers on their own, a second TLS record and write.
		ErrorHandler: g.proxyError,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+HealthzPath, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("GET "+ReadyzPath, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	keys := &keysAPI{store: g.Keys, authn: g.Authenticator, log: g.Log}
	mux.Handle(KeysPath, keys)
	mux.Handle(KeysPath+"/", keys)
	if g.Client != nil {
		mux.Handle(ProjectsPath, &projectsAPI{c: g.Client, authn: g.Authenticator, log: g.Log})
		mux.Handle(ProjectsPath+"/", &membersAPI{c: g.Client, authn: g.Authenticator, log: g.Log})
	}
	if g.Console != nil {
		console := g.consoleProxy(g.Console)
		for _, p := range ConsolePaths {
			mux.Handle(p, console)
		}
	}
	if g.API != nil {
		mux.Handle(KubernetesPath+"/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &statusRecorder{ResponseWriter: w}
			g.API.ServeHTTP(rec, r)
			g.Metrics.observe(KubernetesResource, rec.status())
		}))
	}
	if g.Login != nil {
		g.Login.Register(mux)
	}
	if g.Provider != nil {
		mux.Handle(login.ProviderPath+"/", g.Provider)
	}
	mux.HandleFunc("/", g.serveWorkload)
	return g.routeHosts(mux)
}

// routeHosts sends every request to a serving host to the workload
// handler, whatever its path, and the others to mux.
func (g *Gateway) routeHosts(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := g.Router.ServingDomain; d != "" && strings.HasSuffix(hostOnly(r.Host), "."+d) {
			g.serveWorkload(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// serveWorkload routes, authenticates, authorizes and proxies a request to
// a workload.
func (g *Gateway) serveWorkload(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w}
	rt, user := g.handle(rec, r)
	log := g.Log.WithValues("method", r.Method, "resource", rt.Resource, "namespace", rt.Namespace, "name", rt.Name, "status", rec.status(), "duration", time.Since(start))
	if user != nil {
		log = log.WithValues("user", user.Name, "apiKey", user.KeyID)
	}
	log.V(1).Info("Request")
	g.Metrics.observe(rt.Resource, rec.status())
}

// handle serves a workload request, returning its route and user for the
// log.
func (g *Gateway) handle(w http.ResponseWriter, r *http.Request) (Route, *User) {
	rt, err := g.Router.Route(r)
	var bad *BadPathError
	switch {
	case errors.As(err, &bad):
		http.Error(w, err.Error(), http.StatusBadRequest)
		return rt, nil
	case err != nil:
		http.Error(w, "404 page not found", http.StatusNotFound)
		return rt, nil
	}
	if q := QueryCredential(r); q != "" {
		http.Error(w, "credentials are not accepted in the query string ("+q+"): send Authorization: Bearer", http.StatusBadRequest)
		return rt, nil
	}
	ctx := r.Context()
	var user *User
	if !rt.Public() {
		if user, err = g.Authenticator.Authenticate(ctx, r); err != nil {
			if errors.Is(err, ErrNoCredential) && g.Login != nil && rt.Resource != Serving && login.WantsPage(r) {
				login.RedirectToLogin(w, r)
				return rt, nil
			}
			authnError(w, g.Log, err)
			return rt, nil
		}
		if rt.Resource != Serving && !g.authorize(ctx, w, user, rt.Resource, rt.Namespace, rt.Name) {
			return rt, user
		}
	}
	up, err := g.Resolver.Resolve(ctx, rt)
	if err != nil {
		g.resolveError(w, rt, err)
		return rt, user
	}
	if rt.Resource == Serving && !g.authorize(ctx, w, user, up.Resource, rt.Namespace, up.Name) {
		return rt, user
	}
	g.proxy.ServeHTTP(w, r.WithContext(context.WithValue(ctx, targetKey, &target{route: rt, upstream: up})))
	return rt, user
}

// authorize answers 403 and returns false unless user may open the
// workload.
func (g *Gateway) authorize(ctx context.Context, w http.ResponseWriter, user *User, resource Resource, namespace, name string) bool {
	d, err := g.Authorizer.Authorize(ctx, user, resource, namespace, name)
	if err != nil {
		g.Log.Error(err, "Authorization failed", "user", user.Name)
		http.Error(w, "authorization is unavailable", http.StatusServiceUnavailable)
		return false
	}
	if !d.Allowed {
		g.Log.V(1).Info("Forbidden", "user", user.Name, "reason", d.Reason)
		http.Error(w, "forbidden: "+d.Reason, http.StatusForbidden)
		return false
	}
	return true
}

// authnError answers a failed authentication, logging with log what is not
// the client's fault.
func authnError(w http.ResponseWriter, log logr.Logger, err error) {
	if errors.Is(err, ErrNoCredential) || errors.Is(err, ErrBadCredential) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="accelstack"`)
		http.Error(w, "unauthorized: "+err.Error(), http.StatusUnauthorized)
		return
	}
	log.Error(err, "Authentication failed")
	http.Error(w, "authentication is unavailable", http.StatusServiceUnavailable)
}

// resolveError answers a route without upstream.
func (g *Gateway) resolveError(w http.ResponseWriter, rt Route, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		http.Error(w, string(rt.Resource)+" "+rt.Namespace+"/"+rt.Name+" not found", http.StatusNotFound)
	case errors.Is(err, ErrNotReady):
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	default:
		g.Log.Error(err, "Resolving an upstream failed", "resource", rt.Resource, "namespace", rt.Namespace, "name", rt.Name)
		http.Error(w, "the workload cannot be looked up", http.StatusBadGateway)
	}
}

// proxyError answers a request the upstream did not answer, and forgets
// the upstream: the workload may have new names.
func (g *Gateway) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	t, _ := r.Context().Value(targetKey).(*target)
	if t != nil {
		g.Resolver.Forget(t.route)
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	g.Log.Info("The workload did not answer", "host", r.Host, "error", err.Error())
	http.Error(w, "the workload did not answer", http.StatusBadGateway)
}

// gatewayCookies are the cookies of the gateway and its login, which no
// workload sees.
var gatewayCookies = []string{activity.AccessCookie, login.SessionCookie, login.FlowCookie, login.FormCookie}

// ownCookie reports whether a cookie is the gateway's or the identity
// provider's (whose cookies a browser sends to every path of the provider's
// host when it shares the gateway's): no workload sees those.
func ownCookie(name string) bool {
	return slices.Contains(gatewayCookies, name) || strings.HasPrefix(name, login.ProviderCookiePrefix)
}

// rewrite makes the outgoing request of a proxied one: to the upstream, at
// the route's path, with the client's Host (Jupyter and code-server check
// WebSocket origins against it), X-Forwarded headers, and the workload's
// access token as its only credential: the client's own access token and
// login cookies are removed.
func rewrite(pr *httputil.ProxyRequest) {
	t := pr.In.Context().Value(targetKey).(*target)
	out := pr.Out
	eps := t.upstream.Endpoints
	out.URL.Scheme, out.URL.Host = "http", eps[rand.IntN(len(eps))]
	if out.URL.Path != t.route.Path {
		out.URL.Path, out.URL.RawPath = t.route.Path, ""
	}
	pr.SetXForwarded()
	out.Header.Del("Authorization")
	out.Header.Del(activity.ProbeHeader)
	var token []string
	if t.upstream.Token != "" {
		token = []string{activity.AccessCookie + "=" + t.upstream.Token}
	}
	replaceCookies(out.Header, ownCookie, token...)
}

// replaceCookies removes the cookies whose names drop reports from the
// Cookie headers of h and adds the cookies add, leaving one Cookie header,
// as HTTP/1.1 wants.
func replaceCookies(h http.Header, drop func(name string) bool, add ...string) {
	var kept []string
	for _, line := range h.Values("Cookie") {
		for part := range strings.SplitSeq(line, ";") {
			part = strings.TrimSpace(part)
			if n, _, _ := strings.Cut(part, "="); part != "" && !drop(n) {
				kept = append(kept, part)
			}
		}
	}
	h.Del("Cookie")
	if kept = append(kept, add...); len(kept) > 0 {
		h.Set("Cookie", strings.Join(kept, "; "))
	}
}

// statusRecorder remembers the status of a response; it passes Flush and
// Hijack on (Unwrap), so streaming and WebSockets go through.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer's Flush and
// Hijack.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// status returns the status written, 200 when none was.
func (s *statusRecorder) status() int {
	if s.code == 0 {
		return http.StatusOK
	}
	return s.code
}
