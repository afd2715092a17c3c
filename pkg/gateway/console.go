package gateway

import (
	"errors"
	"net/http"
	"net/http/httputil"
	"net/url"

	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
	"github.com/accelstack/accelstack/pkg/gateway/login"
)

// ConsoleResource is the resource label of the consoles' requests.
const ConsoleResource Resource = "console"

// ConsolePaths are the consoles' paths, which the gateway sends to the
// console server once the caller has logged in.
var ConsolePaths = []string{gatewayapi.BuildConsolePath}

// consoleProxy serves the consoles from the console server at upstream.
// The pages carry no rights: what they show comes from the Kubernetes API
// as the user. A browser without a session is sent to log in first; the
// caller's credentials do not travel on.
func (g *Gateway) consoleProxy(upstream *url.URL) http.Handler {
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("Cookie")
		},
		Transport:    g.Transport,
		ErrorHandler: g.proxyError,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		defer func() { g.Metrics.observe(ConsoleResource, rec.status()) }()
		if _, err := g.Authenticator.Authenticate(r.Context(), r); err != nil {
			if errors.Is(err, ErrNoCredential) && g.Login != nil && login.WantsPage(r) {
				login.RedirectToLogin(rec, r)
				return
			}
			authnError(rec, g.Log, err)
			return
		}
		proxy.ServeHTTP(rec, r)
	})
}
