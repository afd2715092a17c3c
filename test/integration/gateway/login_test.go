package gateway

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/accelstack/accelstack/pkg/gateway"
	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
	"github.com/accelstack/accelstack/pkg/gateway/login"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/loginclient"
)

// browser is a loginclient.Browser that fails the test on an error,
// trusting the gateway's test certificate.
type browser struct{ *loginclient.Browser }

func newBrowser(t *testing.T, gw *httptest.Server) *browser {
	t.Helper()
	roots := gw.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	b, err := loginclient.New(gw.URL, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	return &browser{b}
}

// get opens target (a path on the gateway, or a URL) as a page.
func (b *browser) get(t *testing.T, target string) (*http.Response, string) {
	t.Helper()
	return must(b.Get(context.Background(), target))(t)
}

func (b *browser) send(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	return must(b.Send(req))(t)
}

// submit fills the login form of page and posts it.
func (b *browser) submit(t *testing.T, page, user, password string) (*http.Response, string) {
	t.Helper()
	return must(b.Submit(context.Background(), page, user, password))(t)
}

// must fails the test on err, else returns resp and body.
func must(resp *http.Response, body string, err error) func(*testing.T) (*http.Response, string) {
	return func(t *testing.T) (*http.Response, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return resp, body
	}
}

// loginTests: a browser logs in through the gateway, Ory Hydra and
// OpenLDAP, opens its project's Notebook by its group's membership, and
// logs out.
func loginTests(t *testing.T, e *env) {
	ctx := context.Background()
	dir := harness.StartLDAP(t,
		harness.LDAPUser{Name: "carol", Password: "carol-pw", Groups: []string{"ml-team"}},
		harness.LDAPUser{Name: "dave", Password: "dave-pw"})
	// carol is a member of team-a through her group only.
	e.bind(ctx, t, "team-a", "ml-team", "accelstack-project-member", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "ml-team"})

	gw := httptest.NewUnstartedServer(nil)
	base := "https://" + gw.Listener.Addr().String()
	idp := harness.StartHydra(t, harness.HydraOptions{
		LoginURL: base + login.LoginAppPath, ConsentURL: base + login.ConsentAppPath, LogoutURL: base + login.LogoutAppPath,
		Env: []string{"URLS_POST_LOGOUT_REDIRECT=" + base + login.LoggedOutPath},
	})
	files := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(files, name)
		if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	opts := gateway.DefaultOptions()
	opts.CacheTTL = 0
	opts.Host = gw.Listener.Addr().String()
	opts.Login.Issuer = idp.Issuer
	opts.Login.AdminURL = idp.AdminURL
	opts.Login.ClientSecretFile = write("client-secret", "gateway-client-secret")
	opts.Login.SessionKeyFile = write("session-key", strings.Repeat("s", 40))
	opts.Login.LDAP.URL = dir.URL
	opts.Login.LDAP.BindDN = dir.BindDN
	opts.Login.LDAPBindPasswordFile = write("ldap-password", dir.BindPassword)
	opts.Login.LDAP.UserBaseDN = dir.UserBaseDN
	opts.Login.LDAP.GroupBaseDN = dir.GroupBaseDN
	g := e.gateway(ctx, t, opts)
	if err := g.Login.EnsureClient(ctx); err != nil {
		t.Fatal(err)
	}
	gw.Config.Handler = g.Handler()
	gw.StartTLS()
	t.Cleanup(gw.Close)
	nb := "/t9k/notebooks/projects/team-a/name/nb/lab?reset"

	b := newBrowser(t, gw)
	resp, page := b.get(t, nb)
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != login.LoginAppPath {
		t.Fatalf("opening the Notebook without a session ended at %d %s, want the login form", resp.StatusCode, resp.Request.URL)
	}

	t.Run("a wrong password shows the form again", func(t *testing.T) {
		resp, again := b.submit(t, page, "carol", "wrong")
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(again, "wrong user name or password") {
			t.Fatalf("got %d:\n%s", resp.StatusCode, again)
		}
		page = again
	})
	t.Run("a form without its CSRF cookie is refused", func(t *testing.T) {
		other := newBrowser(t, gw)
		if resp, _ := other.submit(t, page, "carol", "carol-pw"); resp.StatusCode != http.StatusForbidden {
			t.Errorf("got %d, want 403", resp.StatusCode)
		}
	})

	var session struct {
		User      string
		Groups    []string
		CSRFToken string
	}
	t.Run("logging in returns to the Notebook, opened by the group's membership", func(t *testing.T) {
		resp, body := b.submit(t, page, "carol", "carol-pw")
		if resp.StatusCode != http.StatusOK || body != "ok" || resp.Request.URL.RequestURI() != nb {
			t.Fatalf("got %d %q at %s", resp.StatusCode, body, resp.Request.URL)
		}
		r := <-e.reached
		<-e.dials
		if c := r.Header.Get("Cookie"); strings.Contains(c, login.SessionCookie) || c != "t9k-access=token-team-a" {
			t.Errorf("the workload got cookies %q, want its access token only", c)
		}
		resp, body = b.get(t, login.SessionPath)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("session: %d %s", resp.StatusCode, body)
		}
		if err := json.Unmarshal([]byte(body), &session); err != nil {
			t.Fatal(err)
		}
		if session.User != "carol" || strings.Join(session.Groups, ",") != "ml-team" || session.CSRFToken == "" {
			t.Errorf("session = %+v", session)
		}
		for _, c := range b.Jar.Cookies(mustURL(t, gw.URL)) {
			if c.Name == login.SessionCookie && strings.Contains(c.Value, "carol") {
				t.Errorf("the session cookie shows its user: %s", c.Value)
			}
		}
	})
	t.Run("another project stays closed", func(t *testing.T) {
		if resp, _ := b.get(t, "/t9k/notebooks/projects/team-b/name/nb/lab"); resp.StatusCode != http.StatusForbidden {
			t.Errorf("got %d, want 403", resp.StatusCode)
		}
	})
	t.Run("changing API keys with a session needs its CSRF token", func(t *testing.T) {
		post := func(token string) int {
			req, _ := http.NewRequest("POST", gw.URL+gateway.KeysPath, strings.NewReader(`{"name":"laptop","scopes":["build"]}`))
			if token != "" {
				req.Header.Set(login.CSRFHeader, token)
			}
			resp, _ := b.send(t, req)
			return resp.StatusCode
		}
		if code := post(""); code != http.StatusForbidden {
			t.Errorf("without the token: %d, want 403", code)
		}
		if code := post(session.CSRFToken); code != http.StatusCreated {
			t.Errorf("with the token: %d, want 201", code)
		}
	})
	t.Run("an API call without a session is 401, not a redirect", func(t *testing.T) {
		req, _ := http.NewRequest("GET", gw.URL+"/t9k/notebooks/projects/team-a/name/nb/api/status", nil)
		req.Header.Set("Accept", "application/json")
		if resp, _ := newBrowser(t, gw).send(t, req); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("got %d, want 401", resp.StatusCode)
		}
	})
	t.Run("the Kubernetes API with a session needs its CSRF token to change state", func(t *testing.T) {
		list := func(ns string) (int, string) {
			req, _ := http.NewRequest("GET", gw.URL+gateway.KubernetesPath+"/api/v1/namespaces/"+ns+"/pods", nil)
			req.Header.Set("Accept", "application/json")
			resp, body := b.send(t, req)
			return resp.StatusCode, body
		}
		if code, body := list("team-a"); code != http.StatusOK || !strings.Contains(body, "PodList") {
			t.Errorf("carol lists team-a's pods by her group: %d %.200s", code, body)
		}
		if code, _ := list("team-b"); code != http.StatusForbidden {
			t.Errorf("carol lists team-b's pods: %d, want 403", code)
		}
		cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"by-carol"}}`
		post := func(token string) int {
			req, _ := http.NewRequest("POST", gw.URL+gateway.KubernetesPath+"/api/v1/namespaces/team-a/configmaps", strings.NewReader(cm))
			req.Header.Set("Content-Type", "application/json")
			if token != "" {
				req.Header.Set(login.CSRFHeader, token)
			}
			resp, _ := b.send(t, req)
			return resp.StatusCode
		}
		if code := post(""); code != http.StatusForbidden {
			t.Errorf("without the token: %d, want 403", code)
		}
		if code := post(session.CSRFToken); code != http.StatusCreated {
			t.Errorf("with the token: %d, want 201", code)
		}
	})
	t.Run("a password login answers a token for the Kubernetes API", func(t *testing.T) {
		loginAs := func(user, password string) (int, gatewayapi.TokenAnswer) {
			body, _ := json.Marshal(gatewayapi.PasswordLogin{Username: user, Password: password})
			req, _ := http.NewRequest("POST", gw.URL+login.LoginPath, strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			resp, out := newBrowser(t, gw).send(t, req)
			var ans gatewayapi.TokenAnswer
			_ = json.Unmarshal([]byte(out), &ans)
			return resp.StatusCode, ans
		}
		if code, _ := loginAs("carol", "wrong"); code != http.StatusUnauthorized {
			t.Errorf("a wrong password: %d, want 401", code)
		}
		code, ans := loginAs("carol", "carol-pw")
		if code != http.StatusOK || !strings.HasPrefix(ans.Token, gatewayapi.TokenPrefix) || ans.User != "carol" {
			t.Fatalf("login: %d %+v", code, ans)
		}
		req, _ := http.NewRequest("GET", gw.URL+gateway.KubernetesPath+"/api/v1/namespaces/team-a/configmaps/by-carol", nil)
		req.Header.Set("Authorization", "Bearer "+ans.Token)
		resp, body := newBrowser(t, gw).send(t, req)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"by-carol"`) {
			t.Errorf("the token reads carol's ConfigMap: %d %.200s", resp.StatusCode, body)
		}
		req.Header.Set("Authorization", "Bearer "+ans.Token[:len(ans.Token)-2]+"xx")
		if resp, _ := newBrowser(t, gw).send(t, req); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a forged token: %d, want 401", resp.StatusCode)
		}
	})
	t.Run("a user who is no member is refused", func(t *testing.T) {
		d := newBrowser(t, gw)
		_, form := d.get(t, nb)
		if resp, _ := d.submit(t, form, "dave", "dave-pw"); resp.StatusCode != http.StatusForbidden {
			t.Errorf("got %d, want 403", resp.StatusCode)
		}
	})
	t.Run("logging out ends the session", func(t *testing.T) {
		resp, body := b.get(t, login.LogoutPath)
		if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != login.LoggedOutPath || !strings.Contains(body, "logged out") {
			t.Fatalf("logout ended at %d %s:\n%s", resp.StatusCode, resp.Request.URL, body)
		}
		if resp, _ := b.get(t, login.SessionPath); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("session after logout: %d, want 401", resp.StatusCode)
		}
		if resp, _ := b.get(t, nb); resp.Request.URL.Path != login.LoginAppPath {
			t.Errorf("the Notebook after logout ended at %s, want the login form", resp.Request.URL)
		}
	})
	t.Run("too many wrong passwords stop the checks for a while", func(t *testing.T) {
		d := newBrowser(t, gw)
		_, form := d.get(t, nb)
		var code int
		for range 6 {
			var resp *http.Response
			resp, form = d.submit(t, form, "dave", "guess")
			code = resp.StatusCode
		}
		if code != http.StatusTooManyRequests {
			t.Errorf("the sixth wrong password: %d, want 429", code)
		}
	})
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
