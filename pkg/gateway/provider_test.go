package gateway

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/go-logr/logr"

	"github.com/accelstack/accelstack/pkg/gateway/login"
)

func TestProviderProxy(t *testing.T) {
	var got *http.Request
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(r.Context())
		_, _ = w.Write([]byte("hydra"))
	}))
	defer upstream.Close()
	back, _ := url.Parse(upstream.URL + "/base/")
	h := providerProxy(back, http.DefaultTransport, logr.Discard())

	req := httptest.NewRequest("GET", "https://gw.example"+login.ProviderPath+"/oauth2/auth?client_id=c", nil)
	req.Header.Set("Cookie", login.SessionCookie+"=s; ory_hydra_session=h; t9k-access=a")
	req.Header.Set("Authorization", "Basic Yzpz")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK || got == nil {
		t.Fatalf("proxied request: %d, upstream saw %v", w.Code, got)
	}
	if got.URL.Path != "/base/oauth2/auth" || got.URL.RawQuery != "client_id=c" {
		t.Errorf("upstream path %s?%s, want /base/oauth2/auth?client_id=c", got.URL.Path, got.URL.RawQuery)
	}
	if c := got.Header.Get("Cookie"); c != "ory_hydra_session=h" {
		t.Errorf("upstream cookies %q, want the provider's own only", c)
	}
	if p := got.Header.Get("X-Forwarded-Proto"); p != "https" {
		t.Errorf("X-Forwarded-Proto = %q, want https", p)
	}
	if a := got.Header.Get("Authorization"); a != "Basic Yzpz" {
		t.Errorf("a client's credentials at the token endpoint did not pass: %q", a)
	}

	for _, p := range []string{"/health/ready", "/admin/clients", "/oauth2/../admin/clients", "/oauth2//x", "/oauth2/./auth", "/.well-known/other", ""} {
		got = nil
		req := httptest.NewRequest("GET", "https://gw.example"+login.ProviderPath+p, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusNotFound || got != nil {
			t.Errorf("%q: %d, reached the provider: %v; want 404 here", p, w.Code, got != nil)
		}
	}
	req = httptest.NewRequest("GET", "https://gw.example"+login.ProviderPath+"/oauth2/a%2Fb", nil)
	w = httptest.NewRecorder()
	if h.ServeHTTP(w, req); w.Code != http.StatusNotFound {
		t.Errorf("an encoded slash: %d, want 404", w.Code)
	}
}
