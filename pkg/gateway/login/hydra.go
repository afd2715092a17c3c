package login

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Hydra is a client of Ory Hydra's admin API: the login, consent and
// logout requests its login app answers, and the gateway's OAuth 2.0
// client.
type Hydra struct {
	// AdminURL is the admin API's base URL, e.g. http://hydra:4445.
	AdminURL *url.URL
	// HTTP carries the calls; nil uses a client with a 10 s timeout.
	HTTP *http.Client
}

// errNotFound: the admin API answered 404 (an unknown client), or 404 or
// 410 for a challenge that is unknown, used or expired.
var errNotFound = errors.New("not found at the identity provider")

// loginRequest is what Hydra asks the login app.
type loginRequest struct {
	Challenge string `json:"challenge"`
	// Skip: Hydra remembers the user; the app must accept with Subject.
	Skip    bool   `json:"skip"`
	Subject string `json:"subject"`
}

// acceptLogin accepts a login.
type acceptLogin struct {
	Subject     string         `json:"subject"`
	Remember    bool           `json:"remember"`
	RememberFor int64          `json:"remember_for"`
	Context     map[string]any `json:"context,omitempty"`
}

// consentRequest is what Hydra asks the consent app.
type consentRequest struct {
	Challenge                    string         `json:"challenge"`
	Subject                      string         `json:"subject"`
	RequestedScope               []string       `json:"requested_scope"`
	RequestedAccessTokenAudience []string       `json:"requested_access_token_audience"`
	Context                      map[string]any `json:"context"`
	Client                       struct {
		ClientID string `json:"client_id"`
	} `json:"client"`
}

// acceptConsent grants scopes and sets the tokens' claims.
type acceptConsent struct {
	GrantScope               []string `json:"grant_scope"`
	GrantAccessTokenAudience []string `json:"grant_access_token_audience"`
	Remember                 bool     `json:"remember"`
	RememberFor              int64    `json:"remember_for"`
	Session                  struct {
		IDToken map[string]any `json:"id_token,omitempty"`
	} `json:"session"`
}

// rejection refuses a request with an OAuth 2.0 error.
type rejection struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// redirect is Hydra's answer to an accept or reject.
type redirect struct {
	RedirectTo string `json:"redirect_to"`
}

// Client is an OAuth 2.0 client registered with Hydra.
type Client struct {
	ID                     string   `json:"client_id"`
	Secret                 string   `json:"client_secret,omitempty"`
	Name                   string   `json:"client_name,omitempty"`
	RedirectURIs           []string `json:"redirect_uris"`
	PostLogoutRedirectURIs []string `json:"post_logout_redirect_uris,omitempty"`
	GrantTypes             []string `json:"grant_types"`
	ResponseTypes          []string `json:"response_types"`
	Scope                  string   `json:"scope"`
	TokenEndpointAuth      string   `json:"token_endpoint_auth_method"`
	SkipConsent            bool     `json:"skip_consent"`
}

// EnsureClient creates c, or replaces the client of its ID, so that a
// restarted gateway repairs a changed secret or redirect URL.
func (h *Hydra) EnsureClient(ctx context.Context, c Client) error {
	err := h.call(ctx, http.MethodPut, "/admin/clients/"+url.PathEscape(c.ID), nil, c, nil)
	if errors.Is(err, errNotFound) {
		err = h.call(ctx, http.MethodPost, "/admin/clients", nil, c, nil)
	}
	if err != nil {
		return fmt.Errorf("registering OAuth client %s: %w", c.ID, err)
	}
	return nil
}

// request reads the login, consent or logout request of a challenge.
func (h *Hydra) request(ctx context.Context, flow, challenge string, into any) error {
	return h.call(ctx, http.MethodGet, "/admin/oauth2/auth/requests/"+flow, url.Values{flow + "_challenge": {challenge}}, nil, into)
}

// answer accepts or rejects (verb) the request of a challenge and returns
// where the browser goes next.
func (h *Hydra) answer(ctx context.Context, flow, verb, challenge string, body any) (string, error) {
	var r redirect
	if err := h.call(ctx, http.MethodPut, "/admin/oauth2/auth/requests/"+flow+"/"+verb, url.Values{flow + "_challenge": {challenge}}, body, &r); err != nil {
		return "", err
	}
	if r.RedirectTo == "" {
		return "", fmt.Errorf("the identity provider's %s %s answer has no redirect_to", flow, verb)
	}
	return r.RedirectTo, nil
}

// call sends one admin request, with body as JSON when not nil, and reads
// a JSON answer into into when not nil.
func (h *Hydra) call(ctx context.Context, method, path string, q url.Values, body, into any) error {
	u := *h.AdminURL
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = q.Encode()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encoding %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := h.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return fmt.Errorf("%s %s: %w (%d)", method, path, errNotFound, resp.StatusCode)
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("%s %s: the identity provider answered %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(msg))
	case into == nil:
		return nil
	}
	if err := json.Unmarshal(msg, into); err != nil {
		return fmt.Errorf("reading the answer of %s %s: %w", method, path, err)
	}
	return nil
}
