package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/accelstack/accelstack/pkg/certs"
	"github.com/accelstack/accelstack/test/harness"
)

// tlsFiles is the serving certificate both proxies serve, and the pool
// the client trusts it with.
type tlsFiles struct {
	cert, key string
	pool      *x509.CertPool
}

// issueTLS writes a certificate for 127.0.0.1 and localhost, and its key,
// into dir.
func issueTLS(dir string) (tlsFiles, error) {
	now := time.Now()
	ca, err := certs.NewCA("bench-gateway-ca", now, 24*time.Hour)
	if err != nil {
		return tlsFiles{}, fmt.Errorf("making the CA: %w", err)
	}
	cert, key, err := ca.Issue(certs.Leaf{CommonName: "localhost", DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, Server: true}, now, 24*time.Hour)
	if err != nil {
		return tlsFiles{}, fmt.Errorf("issuing the serving certificate: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tlsFiles{}, fmt.Errorf("encoding the serving key: %w", err)
	}
	f := tlsFiles{cert: filepath.Join(dir, "tls.crt"), key: filepath.Join(dir, "tls.key"), pool: x509.NewCertPool()}
	f.pool.AddCert(ca.Cert)
	if err := os.WriteFile(f.cert, certs.EncodeCert(cert), 0o600); err != nil {
		return tlsFiles{}, fmt.Errorf("writing the serving certificate: %w", err)
	}
	if err := os.WriteFile(f.key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return tlsFiles{}, fmt.Errorf("writing the serving key: %w", err)
	}
	return f, nil
}

// startGateway starts the gateway binary bin as deployed, with the
// cluster's kubeconfig of its ServiceAccount and the serving certificate,
// and returns it and its URL once it is ready.
func startGateway(dir, bin string, cl *cluster, tf tlsFiles, env []string) (*harness.Process, string, error) {
	addr, metrics := freeAddr(), freeAddr()
	if addr == "" || metrics == "" {
		return nil, "", errors.New("no free port for the gateway")
	}
	p, err := harness.RunProcess("gateway", bin, []string{
		"--kubeconfig", cl.gatewayKubeconfig, "--address", addr, "--metrics-address", metrics,
		"--tls-cert-file", tf.cert, "--tls-key-file", tf.key,
	}, filepath.Join(dir, "gateway.log"), env...)
	if err != nil {
		return nil, "", fmt.Errorf("starting the gateway: %w", err)
	}
	base := "https://" + addr
	if err := p.WaitReady(time.Minute, probe(tf, base+"/readyz")); err != nil {
		return nil, "", errors.Join(err, p.Stop())
	}
	return p, base, nil
}

// startOAuth2Proxy starts oauth2-proxy bin in front of upstream, with
// oidc as its OIDC provider, the serving certificate, and bearer ID
// tokens of oidc accepted beside its session cookies; its request log is
// off, as the gateway's is by default.
func startOAuth2Proxy(dir, bin string, oidc *mockoidc.MockOIDC, upstream string, tf tlsFiles, env []string) (*harness.Process, string, error) {
	addr := freeAddr()
	if addr == "" {
		return nil, "", errors.New("no free port for oauth2-proxy")
	}
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return nil, "", fmt.Errorf("making the cookie secret: %w", err)
	}
	base := "https://" + addr
	cfg := oidc.Config()
	p, err := harness.RunProcess("oauth2-proxy", bin, []string{
		"--provider=oidc", "--oidc-issuer-url=" + cfg.Issuer, "--client-id=" + cfg.ClientID, "--client-secret=" + cfg.ClientSecret,
		"--redirect-url=" + base + "/oauth2/callback", "--https-address=" + addr,
		"--tls-cert-file=" + tf.cert, "--tls-key-file=" + tf.key,
		"--upstream=" + upstream + "/", "--email-domain=*",
		"--cookie-secret=" + hex.EncodeToString(secret), "--skip-jwt-bearer-tokens", "--request-logging=false",
	}, filepath.Join(dir, "oauth2-proxy.log"), env...)
	if err != nil {
		return nil, "", fmt.Errorf("starting oauth2-proxy: %w", err)
	}
	if err := p.WaitReady(time.Minute, probe(tf, base+"/ping")); err != nil {
		return nil, "", errors.Join(err, p.Stop())
	}
	return p, base, nil
}

// probe returns a readiness probe of a GET of u that wants 200.
func probe(tf tlsFiles, u string) func(context.Context) error {
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tf.pool, MinVersion: tls.VersionTLS12}}}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		return nil
	}
}

// login signs in to oauth2-proxy at base through oidc, as a browser
// does: /oauth2/start, the provider's authorization, /oauth2/callback and
// back to the status path through the proxy. It returns the session's
// Cookie header.
func login(ctx context.Context, tf tlsFiles, base string) (string, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return "", fmt.Errorf("making a cookie jar: %w", err)
	}
	client := &http.Client{Jar: jar, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tf.pool, MinVersion: tls.VersionTLS12}}}
	u := base + "/oauth2/start?rd=" + url.QueryEscape(statusPath)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("signing in to oauth2-proxy: %w", err)
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || string(b) != string(responseBody) {
		return "", fmt.Errorf("signing in to oauth2-proxy ended at %s with %s %q: %w", resp.Request.URL, resp.Status, b, err)
	}
	bu, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	var session []string
	for _, c := range jar.Cookies(bu) {
		if strings.HasPrefix(c.Name, "_oauth2_proxy") && !strings.HasSuffix(c.Name, "_csrf") {
			session = append(session, c.Name+"="+c.Value)
		}
	}
	if len(session) == 0 {
		return "", errors.New("oauth2-proxy set no session cookie")
	}
	return strings.Join(session, "; "), nil
}

// idToken returns an ID token oidc issues for its default user to its
// client, by the authorization code flow.
func idToken(ctx context.Context, oidc *mockoidc.MockOIDC) (string, error) {
	cfg := oidc.Config()
	const redirect = "https://127.0.0.1/callback"
	q := url.Values{"client_id": {cfg.ClientID}, "response_type": {"code"}, "scope": {"openid email profile"}, "state": {"s"}, "nonce": {"n"}, "redirect_uri": {redirect}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, oidc.AuthorizationEndpoint()+"?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("authorizing: %w", err)
	}
	_ = resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return "", fmt.Errorf("authorizing: %s: %w", resp.Status, err)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect}, "client_id": {cfg.ClientID}, "client_secret": {cfg.ClientSecret}}
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, oidc.TokenEndpoint(), strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err = client.Do(req); err != nil {
		return "", fmt.Errorf("asking for the tokens: %w", err)
	}
	defer resp.Body.Close()
	var tokens struct {
		IDToken string `json:"id_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tokens); err != nil || tokens.IDToken == "" {
		return "", fmt.Errorf("the token endpoint answered %s without an ID token: %w", resp.Status, err)
	}
	return tokens.IDToken, nil
}

// freeAddr returns a loopback address with a port that was free a moment
// ago; "" when none was found.
func freeAddr() string {
	port, err := harness.FreePort()
	if err != nil {
		return ""
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
