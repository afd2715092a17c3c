package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/accelstack/accelstack/test/harness"
)

// TestHydraServesDiscovery starts Hydra, registers a client, and checks
// the discovery document and the key set a relying party reads first.
func TestHydraServesDiscovery(t *testing.T) {
	t.Parallel()
	h := harness.StartHydra(t, harness.HydraOptions{
		LoginURL:   "http://127.0.0.1:1/login",
		ConsentURL: "http://127.0.0.1:1/consent",
		LogoutURL:  "http://127.0.0.1:1/logout",
	})
	c := h.CreateClient(t, harness.HydraClient{
		ID:                     "accelstack-gateway",
		Secret:                 "accelstack-gateway-secret",
		RedirectURIs:           []string{"http://127.0.0.1:1/oauth2/callback"},
		PostLogoutRedirectURIs: []string{"http://127.0.0.1:1/"},
	})
	if c.ID != "accelstack-gateway" || c.Secret != "accelstack-gateway-secret" {
		t.Errorf("created client %q with secret %q, want accelstack-gateway with its secret", c.ID, c.Secret)
	}
	if want := h.PublicURL + "/"; h.Issuer != want {
		t.Errorf("Issuer = %q, want %q", h.Issuer, want)
	}

	var discovery struct {
		Issuer                string `json:"issuer"`
		AuthorizationEndpoint string `json:"authorization_endpoint"`
		TokenEndpoint         string `json:"token_endpoint"`
		JWKSURI               string `json:"jwks_uri"`
	}
	getJSON(t, h.PublicURL+"/.well-known/openid-configuration", &discovery)
	if discovery.Issuer != h.Issuer {
		t.Errorf("discovery issuer = %q, want %q", discovery.Issuer, h.Issuer)
	}
	if want := h.PublicURL + "/oauth2/auth"; discovery.AuthorizationEndpoint != want {
		t.Errorf("authorization_endpoint = %q, want %q", discovery.AuthorizationEndpoint, want)
	}
	if want := h.PublicURL + "/.well-known/jwks.json"; discovery.JWKSURI != want {
		t.Errorf("jwks_uri = %q, want %q", discovery.JWKSURI, want)
	}

	var jwks struct {
		Keys []struct {
			KeyID string `json:"kid"`
			Use   string `json:"use"`
		} `json:"keys"`
	}
	getJSON(t, h.PublicURL+"/.well-known/jwks.json", &jwks)
	if len(jwks.Keys) == 0 || jwks.Keys[0].KeyID == "" {
		t.Errorf("jwks.json = %+v, want a signing key with a kid", jwks)
	}
}

// getJSON decodes the JSON document at url into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(fmt.Errorf("decoding %s: %w", url, err))
	}
}
