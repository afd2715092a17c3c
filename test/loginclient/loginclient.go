// Package loginclient is an HTTP client that goes through the gateway's
// browser login as a browser does: it keeps cookies, follows redirects
// (to the identity provider and back), asks for pages as HTML, and fills
// in the login form. The gateway's integration and end-to-end tests and
// the local cluster's demo use it.
package loginclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/accelstack/accelstack/pkg/gateway/login"
)

// maxBody bounds the body a Browser reads.
const maxBody = 4 << 20

// Browser is a logged-out browser until Login or Submit succeed.
type Browser struct {
	*http.Client
	// Base is the gateway, https://<host>; paths are relative to it.
	Base string
}

// New returns a browser for the gateway at base that trusts tlsConfig's
// roots (nil: the system's).
func New(base string, tlsConfig *tls.Config) (*Browser, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, fmt.Errorf("a cookie jar: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConfig
	return &Browser{Client: &http.Client{Jar: jar, Transport: tr, Timeout: time.Minute}, Base: strings.TrimSuffix(base, "/")}, nil
}

// URL returns target as a URL: a path on the gateway, or target itself.
func (b *Browser) URL(target string) string {
	if strings.HasPrefix(target, "/") {
		return b.Base + target
	}
	return target
}

// Get opens target (a path on the gateway, or a URL) as a page, and
// returns the last response of its redirects and its body.
func (b *Browser) Get(ctx context.Context, target string) (*http.Response, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.URL(target), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	return b.Send(req)
}

// Send sends req and returns the response, its body read and closed.
func (b *Browser) Send(req *http.Request) (*http.Response, string, error) {
	resp, err := b.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = resp.Body.Close() }() // read in full below
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return resp, "", fmt.Errorf("reading %s: %w", req.URL, err)
	}
	return resp, string(body), nil
}

// hiddenRE finds the login form's hidden fields.
var hiddenRE = regexp.MustCompile(`name="(challenge|csrf)" value="([^"]*)"`)

// Submit fills the login form of page with user and password and posts
// it, following the redirects back to where the login started.
func (b *Browser) Submit(ctx context.Context, page, user, password string) (*http.Response, string, error) {
	form := url.Values{"username": {user}, "password": {password}}
	for _, m := range hiddenRE.FindAllStringSubmatch(page, -1) {
		form.Set(m[1], m[2])
	}
	if form.Get("challenge") == "" || form.Get("csrf") == "" {
		return nil, "", fmt.Errorf("no login form in the page:\n%s", page)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.Base+login.LoginAppPath, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.Send(req)
}

// Login opens target, which must send a browser without a session to the
// login form, and logs in there as user; it returns target's answer.
func (b *Browser) Login(ctx context.Context, target, user, password string) (*http.Response, string, error) {
	resp, page, err := b.Get(ctx, target)
	if err != nil {
		return nil, "", err
	}
	if resp.Request.URL.Path != login.LoginAppPath {
		return resp, page, fmt.Errorf("opening %s ended at %d %s, not at the login form", target, resp.StatusCode, resp.Request.URL)
	}
	return b.Submit(ctx, page, user, password)
}

// AuthorizationCode runs an OAuth 2.0 authorization-code flow as a
// browser: it opens authURL (the provider's authorization endpoint with
// the client's parameters), logs in at the gateway's form as user, and
// returns the code the provider sends the browser to redirectURI with,
// without opening redirectURI.
func (b *Browser) AuthorizationCode(ctx context.Context, authURL, redirectURI, user, password string) (string, error) {
	c := *b.Client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirectURI) {
			return http.ErrUseLastResponse
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	stopping := &Browser{Client: &c, Base: b.Base}
	resp, page, err := stopping.Get(ctx, authURL)
	if err != nil {
		return "", err
	}
	if resp.Request.URL.Path != login.LoginAppPath {
		return "", fmt.Errorf("the authorization ended at %d %s, not at the login form", resp.StatusCode, resp.Request.URL)
	}
	if resp, page, err = stopping.Submit(ctx, page, user, password); err != nil {
		return "", err
	}
	loc, err := resp.Location()
	if err != nil || !strings.HasPrefix(loc.String(), redirectURI) {
		return "", fmt.Errorf("the login ended at %d %s, not at a redirect to %s: %.300s", resp.StatusCode, resp.Request.URL, redirectURI, page)
	}
	code := loc.Query().Get("code")
	if code == "" {
		return "", fmt.Errorf("the provider sent the browser to %s without a code", loc.Redacted())
	}
	return code, nil
}
