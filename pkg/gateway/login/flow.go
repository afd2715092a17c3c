package login

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// flow is a login in progress, kept in FlowCookie between LoginPath and
// CallbackPath.
type flow struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	Redirect string    `json:"r"`
	Expires  time.Time `json:"e"`
}

// start sends the browser to the provider with a new flow's state, nonce
// and PKCE challenge.
func (l *Login) start(w http.ResponseWriter, r *http.Request) {
	f := flow{State: randomToken(), Nonce: randomToken(), Verifier: oauth2.GenerateVerifier(),
		Redirect: localPath(r.URL.Query().Get("rd")), Expires: time.Now().Add(flowTTL)}
	v, err := l.seal.seal(FlowCookie, f)
	if err != nil {
		l.fail(w, http.StatusInternalServerError, "The login could not start.", err)
		return
	}
	http.SetCookie(w, cookie(FlowCookie, v, LoginPath, f.Expires))
	noStore(w)
	http.Redirect(w, r, l.oauth.AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusFound)
}

// callback redeems the code, verifies the ID token and starts the session.
func (l *Login) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c, err := r.Cookie(FlowCookie)
	var f flow
	if err != nil || l.seal.open(FlowCookie, c.Value, &f) != nil || !time.Now().Before(f.Expires) ||
		subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(f.State)) != 1 {
		l.fail(w, http.StatusBadRequest, "This login link is not valid or has expired. Log in again.", nil)
		return
	}
	http.SetCookie(w, cookie(FlowCookie, "", LoginPath, time.Time{}))
	if e := q.Get("error"); e != "" {
		l.fail(w, http.StatusForbidden, "The login was refused: "+e+": "+q.Get("error_description"), nil)
		return
	}
	ctx := oidc.ClientContext(r.Context(), l.cfg.HTTP)
	tok, err := l.oauth.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		l.fail(w, http.StatusBadGateway, "The identity provider did not complete the login.", err)
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := l.verifier.Verify(ctx, raw)
	if err != nil {
		l.fail(w, http.StatusBadGateway, "The identity provider's ID token is not valid.", err)
		return
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		l.fail(w, http.StatusBadRequest, "This login link is not valid or has expired. Log in again.", nil)
		return
	}
	var claims struct {
		Groups []string `json:"groups"`
	}
	if err := idt.Claims(&claims); err != nil {
		l.fail(w, http.StatusBadGateway, "The identity provider's ID token is not valid.", err)
		return
	}
	if validName(idt.Subject) != nil {
		l.fail(w, http.StatusForbidden, "This user name cannot log in here.", nil)
		return
	}
	s := Session{User: idt.Subject, Groups: cleanGroups(claims.Groups), Expires: time.Now().Add(l.cfg.SessionTTL), CSRF: randomToken()}
	v, err := l.seal.seal(SessionCookie, s)
	if err != nil {
		l.fail(w, http.StatusInternalServerError, "The session could not be kept.", err)
		return
	}
	http.SetCookie(w, cookie(SessionCookie, v, "/", s.Expires))
	l.cfg.Log.Info("Logged in", "user", s.User, "groups", len(s.Groups))
	noStore(w)
	http.Redirect(w, r, f.Redirect, http.StatusFound)
}

// cleanGroups drops the groups that cannot be Kubernetes groups, sorts
// and bounds them.
func cleanGroups(in []string) []string {
	var out []string
	for _, g := range in {
		if validName(g) == nil {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > MaxGroups {
		out = out[:MaxGroups]
	}
	return out
}

// logout ends the session and sends the browser to end the provider's.
func (l *Login) logout(w http.ResponseWriter, r *http.Request) {
	if s, ok := l.Session(r); ok {
		l.cfg.Log.Info("Logged out", "user", s.User)
	}
	http.SetCookie(w, cookie(SessionCookie, "", "/", time.Time{}))
	noStore(w)
	http.Redirect(w, r, strings.TrimSuffix(l.cfg.Issuer, "/")+"/oauth2/sessions/logout", http.StatusSeeOther)
}

// sessionInfo is SessionPath's answer.
type sessionInfo struct {
	User      string    `json:"user"`
	Groups    []string  `json:"groups"`
	Expires   time.Time `json:"expires"`
	CSRFToken string    `json:"csrfToken"`
}

// session answers the session, or 401.
func (l *Login) session(w http.ResponseWriter, r *http.Request) {
	s, ok := l.Session(r)
	noStore(w)
	if !ok {
		http.Error(w, "unauthorized: no session; log in at "+LoginPath, http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(sessionInfo{User: s.User, Groups: s.Groups, Expires: s.Expires, CSRFToken: s.CSRF})
}

// noStore keeps caches from keeping an answer.
func noStore(w http.ResponseWriter) { w.Header().Set("Cache-Control", "no-store") }
