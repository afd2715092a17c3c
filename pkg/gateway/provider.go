package gateway

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/go-logr/logr"

	"github.com/accelstack/accelstack/pkg/gateway/login"
)

// providerPaths are the identity provider's public endpoints that the
// gateway passes on under login.ProviderPath: OpenID Connect discovery and
// keys, the OAuth 2.0 endpoints (authorization, token, revocation,
// logout) and userinfo. Hydra's other public paths (health, metrics) are
// not passed.
var providerPaths = []string{"/.well-known/openid-configuration", "/.well-known/jwks.json", "/oauth2/", "/userinfo"}

// providerProxy passes the requests under login.ProviderPath to the
// identity provider's public URL back, so that browsers reach the
// provider at the gateway's own host: one HTTPS entry, one certificate.
// The provider gets its own cookies only; the gateway's session and the
// workloads' access cookies stay here.
func providerProxy(back *url.URL, transport http.RoundTripper, log logr.Logger) http.Handler {
	base := strings.TrimSuffix(back.Path, "/")
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			path := strings.TrimPrefix(pr.In.URL.Path, login.ProviderPath)
			pr.SetURL(back)
			pr.Out.URL.Path, pr.Out.URL.RawPath = base+path, ""
			pr.Out.Host = back.Host
			pr.SetXForwarded()
			replaceCookies(pr.Out.Header, func(name string) bool { return !strings.HasPrefix(name, login.ProviderCookiePrefix) })
		},
		Transport: transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			log.Error(err, "The identity provider did not answer", "path", r.URL.Path)
			http.Error(w, "the identity provider is not reachable", http.StatusBadGateway)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, login.ProviderPath)
		if !providerPath(path) || r.URL.RawPath != "" {
			http.NotFound(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	})
}

// providerPath reports whether path, below login.ProviderPath, is one of
// providerPaths, with no dot segment or empty segment.
func providerPath(path string) bool {
	if strings.Contains(path, "..") || strings.Contains(path, "/./") || strings.Contains(path, "//") {
		return false
	}
	for _, p := range providerPaths {
		if path == p || strings.HasSuffix(p, "/") && strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
