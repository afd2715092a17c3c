package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/accelstack/accelstack/pkg/gateway/login"
	"github.com/accelstack/accelstack/test/testutil"
)

// Hydra is an Ory Hydra (OpenID Connect provider) started for a test, on
// SQLite in a temp dir.
type Hydra struct {
	// PublicURL is the public API's URL, e.g. http://127.0.0.1:4444, with
	// no trailing slash.
	PublicURL string
	// AdminURL is the admin API's URL, with no trailing slash.
	AdminURL string
	// Issuer is the issuer Hydra signs tokens with and its discovery
	// document names.
	Issuer string
}

// HydraOptions configures StartHydra.
type HydraOptions struct {
	// LoginURL, ConsentURL and LogoutURL are the login, consent and logout
	// apps Hydra redirects the browser to (urls.login, urls.consent,
	// urls.logout).
	LoginURL, ConsentURL, LogoutURL string
	// Issuer is urls.self.issuer; empty means http://127.0.0.1:<public
	// port>/. The discovery document's endpoints are under it.
	Issuer string
	// AccessTokenTTL and IDTokenTTL are ttl.access_token and ttl.id_token;
	// zero keeps Hydra's default (1h).
	AccessTokenTTL, IDTokenTTL time.Duration
	// Env is extra KEY=VALUE settings in Hydra's environment form (e.g.
	// LOG_LEVEL=debug, TTL_AUTH_CODE=1m), which override the config file.
	Env []string
}

// StartHydra migrates a fresh SQLite database with `hydra migrate sql up`,
// starts `hydra serve all` on free loopback ports, waits until both APIs
// report ready, and stops it when the test ends. It runs with --dev, which
// lets the issuer be http (and makes Hydra's cookies not Secure, with names
// ending in _dev), and without telemetry.
func StartHydra(t testutil.T, o HydraOptions) *Hydra {
	t.Helper()
	bin, err := Tool("hydra")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dsn := "DSN=sqlite://" + filepath.Join(dir, "db.sqlite") + "?_fk=true"
	if err := migrateHydra(bin, dsn); err != nil {
		t.Fatal(err)
	}
	publicPort, adminPort := freePort(t), freePort(t)
	for adminPort == publicPort {
		adminPort = freePort(t)
	}
	h := &Hydra{
		PublicURL: "http://127.0.0.1:" + strconv.Itoa(publicPort),
		AdminURL:  "http://127.0.0.1:" + strconv.Itoa(adminPort),
		Issuer:    o.Issuer,
	}
	if h.Issuer == "" {
		h.Issuer = h.PublicURL + "/"
	}
	config := filepath.Join(dir, "hydra.yaml")
	if err := writeHydraConfig(config, h.Issuer, publicPort, adminPort, o); err != nil {
		t.Fatal(err)
	}
	env := append([]string{dsn}, o.Env...)
	p := StartProcess(t, "hydra", bin, []string{"serve", "all", "--config", config, "--dev", "--sqa-opt-out"}, env...)
	err = p.WaitReady(60*time.Second, func(ctx context.Context) error {
		return errors.Join(httpReady(ctx, h.AdminURL+"/health/ready"), httpReady(ctx, h.PublicURL+"/health/ready"))
	})
	if err != nil {
		t.Fatalf("waiting for hydra: %v", err)
	}
	return h
}

// StartGatewayHydra starts Hydra as the identity provider of a gateway
// at base (https://host:port) that serves it at its provider path, as
// deploy/ sets it up: the issuer under the gateway, the gateway's login,
// consent and logout apps, and Hydra's cookies SameSite=Lax (with --dev,
// Hydra's default, None, comes without Secure, which browsers drop).
func StartGatewayHydra(t testutil.T, base string) *Hydra {
	t.Helper()
	issuer := base + login.ProviderPath
	return StartHydra(t, HydraOptions{
		Issuer:   issuer,
		LoginURL: base + login.LoginAppPath, ConsentURL: base + login.ConsentAppPath, LogoutURL: base + login.LogoutAppPath,
		Env: []string{"URLS_SELF_PUBLIC=" + issuer, "URLS_POST_LOGOUT_REDIRECT=" + base + login.LoggedOutPath,
			"SERVE_COOKIES_SAME_SITE_MODE=Lax"},
	})
}

// migrateHydra creates Hydra's tables in the database of dsn (DSN=...).
func migrateHydra(bin, dsn string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "migrate", "sql", "up", "--read-from-env", "--yes")
	cmd.Env = append(os.Environ(), dsn)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("hydra migrate sql up: %w\n%s", err, out)
	}
	return nil
}

// writeHydraConfig writes Hydra's config file for StartHydra to path.
func writeHydraConfig(path, issuer string, publicPort, adminPort int, o HydraOptions) error {
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("generating hydra's system secret: %w", err)
	}
	serve := func(port int) map[string]any {
		return map[string]any{
			"host":        "127.0.0.1",
			"port":        port,
			"request_log": map[string]any{"disable_for_health": true},
		}
	}
	urls := map[string]any{"self": map[string]any{"issuer": issuer}}
	for key, u := range map[string]string{"login": o.LoginURL, "consent": o.ConsentURL, "logout": o.LogoutURL} {
		if u != "" {
			urls[key] = u
		}
	}
	ttl := map[string]any{}
	for key, d := range map[string]time.Duration{"access_token": o.AccessTokenTTL, "id_token": o.IDTokenTTL} {
		if d > 0 {
			ttl[key] = strconv.FormatInt(d.Milliseconds(), 10) + "ms"
		}
	}
	config := map[string]any{
		"serve":   map[string]any{"public": serve(publicPort), "admin": serve(adminPort)},
		"urls":    urls,
		"secrets": map[string]any{"system": []string{hex.EncodeToString(secret)}},
		"log":     map[string]any{"level": "info", "leak_sensitive_values": true},
		"oauth2":  map[string]any{"expose_internal_errors": true},
	}
	if len(ttl) > 0 {
		config["ttl"] = ttl
	}
	b, err := yaml.Marshal(config)
	if err != nil {
		return fmt.Errorf("encoding hydra's config: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("writing hydra's config: %w", err)
	}
	return nil
}

// HydraClient is an OAuth2 client for CreateClient: a confidential client
// (client_secret_basic) of the authorization code and refresh token grants
// that skips the consent app.
type HydraClient struct {
	// ID is client_id; empty lets Hydra choose one.
	ID string
	// Secret is client_secret, at least 6 characters; empty lets Hydra
	// choose one.
	Secret string
	// RedirectURIs are the URLs the authorization code may be sent to.
	RedirectURIs []string
	// PostLogoutRedirectURIs are the URLs logout may return to; Hydra wants
	// each on the scheme, host and port of a redirect URI.
	PostLogoutRedirectURIs []string
	// Scope is the scopes the client may ask for, space separated; empty
	// means "openid offline_access profile email groups".
	Scope string
}

// CreateClient registers c through the admin API and returns it with the
// ID and secret Hydra holds.
func (h *Hydra) CreateClient(t testutil.T, c HydraClient) HydraClient {
	t.Helper()
	if c.Scope == "" {
		c.Scope = "openid offline_access profile email groups"
	}
	body, err := json.Marshal(map[string]any{
		"client_id":                  c.ID,
		"client_secret":              c.Secret,
		"redirect_uris":              c.RedirectURIs,
		"post_logout_redirect_uris":  c.PostLogoutRedirectURIs,
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"scope":                      c.Scope,
		"token_endpoint_auth_method": "client_secret_basic",
		"skip_consent":               true,
	})
	if err != nil {
		t.Fatalf("encoding hydra client %q: %v", c.ID, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.AdminURL+"/admin/clients", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("building the request for hydra client %q: %v", c.ID, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("creating hydra client %q: %v", c.ID, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading hydra's answer to creating client %q: %v", c.ID, err)
	}
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("creating hydra client %q: %s: %s", c.ID, resp.Status, b)
	}
	var created struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	if err := json.Unmarshal(b, &created); err != nil {
		t.Fatalf("decoding hydra's answer to creating client %q: %v: %s", c.ID, err, b)
	}
	c.ID = created.ID
	if created.Secret != "" {
		c.Secret = created.Secret
	}
	return c
}

// httpReady returns nil if a GET of url answers 200.
func httpReady(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("building the request for %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
