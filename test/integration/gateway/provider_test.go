package gateway

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/directory"
	"github.com/accelstack/accelstack/pkg/gateway"
	"github.com/accelstack/accelstack/pkg/gateway/login"
	"github.com/accelstack/accelstack/test/harness"
)

// providerLoginTests: the layout deploy/ installs. Hydra's issuer is the
// gateway's own https://<host>/t9k/security/oidc, which the gateway passes
// to Hydra; passwords come from a users file; the client secret and the
// session key from the login Secret the gateway creates. A second gateway
// on the same Secret honours the first one's session.
func providerLoginTests(t *testing.T, e *env) {
	ctx := context.Background()
	e.bind(ctx, t, "team-a", "erin", "accelstack-project-member", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "erin"})

	gw := httptest.NewUnstartedServer(nil)
	base := "https://" + gw.Listener.Addr().String()
	idp := harness.StartGatewayHydra(t, base)
	issuer := idp.Issuer
	hash, err := directory.HashPassword("erin-pw")
	if err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(t.TempDir(), "users.yaml")
	if err := os.WriteFile(users, []byte("users:\n  - name: erin\n    passwordHash: \""+hash+"\"\n    groups: [ml-team]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := gateway.DefaultOptions()
	opts.CacheTTL = 0
	opts.Host = gw.Listener.Addr().String()
	opts.Login.Issuer = issuer
	opts.Login.BackChannel = idp.PublicURL
	opts.Login.AdminURL = idp.AdminURL
	opts.Login.SecretName = "gateway-login-test"
	opts.Login.UsersFile = users
	opts.ConsoleURL = e.console.URL
	g := e.gateway(ctx, t, opts)
	if err := g.Login.EnsureClient(ctx); err != nil {
		t.Fatal(err)
	}
	gw.Config.Handler = g.Handler()
	gw.StartTLS()
	t.Cleanup(gw.Close)

	t.Run("the provider's discovery is at the issuer, its other paths are not", func(t *testing.T) {
		b := newBrowser(t, gw)
		resp, body := b.get(t, login.ProviderPath+"/.well-known/openid-configuration")
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"issuer":"`+issuer+`"`) {
			t.Errorf("discovery through the gateway: %d %s", resp.StatusCode, body)
		}
		for _, p := range []string{"/health/ready", "/admin/clients", "/oauth2/..%2fadmin/clients"} {
			if resp, _ := b.get(t, login.ProviderPath+p); resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s through the gateway: %d, want 404", p, resp.StatusCode)
			}
		}
	})

	nb := "/t9k/notebooks/projects/team-a/name/nb/lab"
	b := newBrowser(t, gw)
	t.Run("logging in with a password of the users file opens the Notebook", func(t *testing.T) {
		resp, page := b.get(t, nb)
		if resp.Request.URL.Path != login.LoginAppPath {
			t.Fatalf("opening the Notebook ended at %d %s, want the login form", resp.StatusCode, resp.Request.URL)
		}
		resp, body := b.submit(t, page, "erin", "erin-pw")
		if resp.StatusCode != http.StatusOK || body != "ok" || resp.Request.URL.RequestURI() != nb {
			t.Fatalf("got %d %q at %s", resp.StatusCode, body, resp.Request.URL)
		}
		<-e.reached
		<-e.dials
	})

	t.Run("in a real browser", func(t *testing.T) { browserTests(t, e, gw, nb) })
	t.Run("the Build Console in a real browser", func(t *testing.T) { consoleTests(t, e, gw) })

	t.Run("the login Secret was created once and another replica shares it", func(t *testing.T) {
		var s corev1.Secret
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: opts.Namespace, Name: opts.Login.SecretName}, &s); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{gateway.ClientSecretKey, gateway.SessionKeyKey, gateway.HydraSystemKey} {
			if len(s.Data[k]) < 20 {
				t.Errorf("the login Secret's %s is %d bytes, want a random value", k, len(s.Data[k]))
			}
		}
		second := httptest.NewTLSServer(e.gateway(ctx, t, opts).Handler())
		t.Cleanup(second.Close)
		req, _ := http.NewRequest("GET", second.URL+login.SessionPath, nil)
		for _, c := range b.Jar.Cookies(mustURL(t, gw.URL)) {
			req.AddCookie(c)
		}
		resp, err := second.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"user":"erin"`) {
			t.Errorf("the second replica's session answer: %d %s", resp.StatusCode, body)
		}
	})
}
