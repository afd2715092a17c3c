package login

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-logr/logr"
	"golang.org/x/oauth2"

	"github.com/accelstack/accelstack/pkg/directory"
	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
)

// Paths the login serves, under the security server's prefix; the
// callback is the seed's auth-code path.
const (
	// LoginPath starts a login; its query parameter rd is where the
	// browser returns, a path on the gateway's host.
	LoginPath = gatewayapi.LoginPath
	// CallbackPath is where the provider sends the browser with the code.
	CallbackPath = LoginPath + "/auth-code"
	// LogoutPath ends the session here and at the provider.
	LogoutPath = gatewayapi.LogoutPath
	// SessionPath answers the session's user, groups, expiry and CSRF
	// token as JSON, for the consoles.
	SessionPath = gatewayapi.SessionPath
	// LoginAppPath, ConsentAppPath and LogoutAppPath are the provider's
	// login, consent and logout app (its urls.login, urls.consent and
	// urls.logout).
	LoginAppPath   = "/t9k/security/server/idp/login"
	ConsentAppPath = "/t9k/security/server/idp/consent"
	LogoutAppPath  = "/t9k/security/server/idp/logout"
	// LoggedOutPath is the page shown after a logout (the provider's
	// urls.post_logout_redirect).
	LoggedOutPath = "/t9k/security/server/idp/logged-out"
	// ProviderPath is where the gateway serves the identity provider's
	// public endpoints when the provider's issuer is on the gateway's own
	// host (https://<host>/t9k/security/oidc).
	ProviderPath = "/t9k/security/oidc"
)

// flowTTL bounds a login in progress.
const flowTTL = 10 * time.Minute

// GroupsClaim is the ID token claim with the user's groups.
const GroupsClaim = "groups"

// MaxGroups bounds the groups a session keeps.
const MaxGroups = 100

// Config configures the login.
type Config struct {
	// Issuer is the provider's issuer URL, as browsers reach it and as its
	// ID tokens name it; logins start at its /oauth2/auth.
	Issuer string
	// BackChannel is the provider's public URL as the gateway reaches it,
	// for the token endpoint and the keys; empty is Issuer.
	BackChannel string
	// Hydra is the provider's admin API.
	Hydra *Hydra
	// ClientID and ClientSecret are the gateway's OAuth 2.0 client.
	ClientID, ClientSecret string
	// ExternalURL is the gateway as browsers reach it (https://<host>).
	ExternalURL string
	// Directory checks passwords and tells groups.
	Directory directory.Directory
	// SessionKey seals the cookies: at least MinKeyBytes of secret
	// material, the same for every replica.
	SessionKey []byte
	// SessionTTL is how long a session lasts; a user logs in again after.
	SessionTTL time.Duration
	// HTTP carries the back-channel calls; nil uses a 10 s timeout.
	HTTP *http.Client
	Log  logr.Logger
}

// Login serves the browser login. Its Session method tells the gateway
// who a request with a session cookie comes from.
type Login struct {
	cfg      Config
	seal     *sealer
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier
	throttle *throttle
	external *url.URL
}

// New checks cfg and returns the login.
func New(cfg Config) (*Login, error) {
	if cfg.Hydra == nil || cfg.Directory == nil || cfg.ClientID == "" || cfg.ClientSecret == "" {
		return nil, errors.New("the login needs the provider's admin URL, a directory and an OAuth client ID and secret")
	}
	issuer, err := absoluteURL("issuer", cfg.Issuer)
	if err != nil {
		return nil, err
	}
	if cfg.BackChannel == "" {
		cfg.BackChannel = cfg.Issuer
	}
	back, err := absoluteURL("back-channel URL", cfg.BackChannel)
	if err != nil {
		return nil, err
	}
	ext, err := absoluteURL("external URL", cfg.ExternalURL)
	if err != nil {
		return nil, err
	}
	if cfg.SessionTTL <= 0 {
		return nil, fmt.Errorf("the session lifetime %s is not positive", cfg.SessionTTL)
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	seal, err := newSealer(cfg.SessionKey)
	if err != nil {
		return nil, err
	}
	base, backBase := strings.TrimSuffix(issuer.String(), "/"), strings.TrimSuffix(back.String(), "/")
	provider := (&oidc.ProviderConfig{
		IssuerURL:  cfg.Issuer,
		AuthURL:    base + "/oauth2/auth",
		TokenURL:   backBase + "/oauth2/token",
		JWKSURL:    backBase + "/.well-known/jwks.json",
		Algorithms: []string{oidc.RS256, oidc.ES256},
	}).NewProvider(oidc.ClientContext(context.Background(), cfg.HTTP))
	return &Login{
		cfg:  cfg,
		seal: seal,
		oauth: oauth2.Config{
			ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Endpoint: provider.Endpoint(),
			RedirectURL: strings.TrimSuffix(ext.String(), "/") + CallbackPath,
			Scopes:      []string{oidc.ScopeOpenID, "profile", GroupsClaim},
		},
		verifier: provider.Verifier(&oidc.Config{ClientID: cfg.ClientID}),
		throttle: newThrottle(5, 5*time.Minute, 10000),
		external: ext,
	}, nil
}

// absoluteURL parses an http or https URL with a host.
func absoluteURL(what, s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("the login's %s %q is not an http(s) URL with a host and no query", what, s)
	}
	return u, nil
}

// Client is the gateway's OAuth 2.0 client as the provider must know it.
func (l *Login) Client() Client {
	ext := strings.TrimSuffix(l.external.String(), "/")
	return Client{
		ID: l.cfg.ClientID, Secret: l.cfg.ClientSecret, Name: "accelstack gateway",
		RedirectURIs:           []string{ext + CallbackPath},
		PostLogoutRedirectURIs: []string{ext + LoggedOutPath},
		GrantTypes:             []string{"authorization_code"},
		ResponseTypes:          []string{"code"},
		Scope:                  strings.Join(l.oauth.Scopes, " "),
		TokenEndpointAuth:      "client_secret_basic",
	}
}

// EnsureClient registers the gateway's client at the provider, or repairs
// it.
func (l *Login) EnsureClient(ctx context.Context) error {
	return l.cfg.Hydra.EnsureClient(ctx, l.Client())
}

// Register adds the login's handlers to mux.
func (l *Login) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+LoginPath, l.start)
	mux.HandleFunc("POST "+LoginPath, l.passwordLogin)
	mux.HandleFunc("GET "+CallbackPath, l.callback)
	mux.HandleFunc("GET "+LogoutPath, l.logout)
	mux.HandleFunc("POST "+LogoutPath, l.logout)
	mux.HandleFunc("GET "+SessionPath, l.session)
	mux.HandleFunc("GET "+LoginAppPath, l.loginForm)
	mux.HandleFunc("POST "+LoginAppPath, l.loginSubmit)
	mux.HandleFunc("GET "+ConsentAppPath, l.consent)
	mux.HandleFunc("GET "+LogoutAppPath, l.logoutApp)
	mux.HandleFunc("GET "+LoggedOutPath, l.loggedOut)
}

// Session returns the session of r's cookie, if it has a valid one.
func (l *Login) Session(r *http.Request) (*Session, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return nil, false
	}
	var s Session
	if err := l.seal.open(SessionCookie, c.Value, &s); err != nil || s.User == "" || !time.Now().Before(s.Expires) {
		return nil, false
	}
	return &s, true
}

// ValidCSRF reports whether r carries s's CSRF token in CSRFHeader.
func ValidCSRF(r *http.Request, s *Session) bool {
	got := r.Header.Get(CSRFHeader)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRF)) == 1
}

// RedirectToLogin sends a browser to log in and come back to r's URL.
func RedirectToLogin(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, LoginPath+"?rd="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
}

// WantsPage reports whether r is a browser's page navigation, which a
// missing login answers with a redirect to it rather than 401.
func WantsPage(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		strings.Contains(r.Header.Get("Accept"), "text/html") && r.Header.Get("Authorization") == ""
}

// localPath returns rd when it is a path on this host (not another host's
// URL, nor one a browser reads as such), else "/".
func localPath(rd string) string {
	if rd == "" || len(rd) > 2048 || rd[0] != '/' || strings.HasPrefix(rd, "//") || strings.HasPrefix(rd, "/\\") ||
		strings.ContainsFunc(rd, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return "/"
	}
	u, err := url.Parse(rd)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" {
		return "/"
	}
	return rd
}
