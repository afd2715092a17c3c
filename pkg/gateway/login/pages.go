package login

import (
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/accelstack/accelstack/pkg/members"
)

//go:embed page.html
var pageFS embed.FS

// page is the one template of the login's pages.
var page = template.Must(template.ParseFS(pageFS, "page.html"))

// pageData fills page: a form when Challenge is set, else a message.
type pageData struct {
	Title, Message, Error string
	Challenge, CSRF, User string
	Action                string
}

// grantable are the scopes the consent app grants the gateway's client.
var grantable = []string{"openid", "profile", "email", GroupsClaim}

// reservedPrefix starts the names Kubernetes keeps for itself.
const reservedPrefix = "system:"

// validName checks that a user or group name can be a Kubernetes subject
// that is not one of Kubernetes' own.
func validName(name string) error {
	if err := members.ValidateSubject(members.UserKind, name); err != nil {
		return err
	}
	if strings.HasPrefix(name, reservedPrefix) {
		return fmt.Errorf("name %q starts with %q", name, reservedPrefix)
	}
	return nil
}

// render writes the page with code.
func (l *Login) render(w http.ResponseWriter, code int, d pageData) {
	noStore(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.WriteHeader(code)
	if err := page.Execute(w, d); err != nil {
		l.cfg.Log.Error(err, "Writing a login page")
	}
}

// fail shows msg with code, logging err when not nil.
func (l *Login) fail(w http.ResponseWriter, code int, msg string, err error) {
	if err != nil {
		l.cfg.Log.Error(err, "Login failed", "status", code)
	}
	l.render(w, code, pageData{Title: "Login failed", Error: msg})
}

// loginForm is the provider's login app: it shows the form for a
// challenge.
func (l *Login) loginForm(w http.ResponseWriter, r *http.Request) {
	challenge := r.URL.Query().Get("login_challenge")
	var req loginRequest
	if err := l.cfg.Hydra.request(r.Context(), "login", challenge, &req); err != nil {
		l.challengeError(w, err)
		return
	}
	l.showForm(w, http.StatusOK, challenge, "", "")
}

// showForm renders the login form with a new CSRF token in FormCookie.
func (l *Login) showForm(w http.ResponseWriter, code int, challenge, user, msg string) {
	token := randomToken()
	http.SetCookie(w, cookie(FormCookie, token, LoginAppPath, time.Now().Add(flowTTL)))
	l.render(w, code, pageData{Title: "Log in", Challenge: challenge, CSRF: token, User: user, Error: msg, Action: LoginAppPath})
}

// loginSubmit checks the form's password with the directory and accepts
// the login with the user's groups.
func (l *Login) loginSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		l.fail(w, http.StatusBadRequest, "The form could not be read.", nil)
		return
	}
	c, err := r.Cookie(FormCookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostForm.Get("csrf"))) != 1 {
		l.fail(w, http.StatusForbidden, "The form has expired. Go back and log in again.", nil)
		return
	}
	challenge, name := r.PostForm.Get("challenge"), strings.TrimSpace(r.PostForm.Get("username"))
	id, code, err := l.checkPassword(r.Context(), name, r.PostForm.Get("password"))
	switch {
	case code == http.StatusServiceUnavailable:
		l.fail(w, code, "The directory cannot check passwords now. Try again later.", err)
		return
	case err != nil:
		msg := err.Error() + "."
		if errors.Is(err, errThrottled) {
			msg = "Too many failed logins for this user. Wait a few minutes."
		}
		l.showForm(w, code, challenge, name, msg)
		return
	}
	to, err := l.cfg.Hydra.answer(r.Context(), "login", "accept", challenge,
		acceptLogin{Subject: id.Name, Context: map[string]any{GroupsClaim: cleanGroups(id.Groups)}})
	if err != nil {
		l.challengeError(w, err)
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// consent is the provider's consent app: the gateway is the only client
// it grants, without asking (it is the platform itself), and it puts the
// login's groups into the ID token.
func (l *Login) consent(w http.ResponseWriter, r *http.Request) {
	challenge := r.URL.Query().Get("consent_challenge")
	var req consentRequest
	if err := l.cfg.Hydra.request(r.Context(), "consent", challenge, &req); err != nil {
		l.challengeError(w, err)
		return
	}
	if req.Client.ClientID != l.cfg.ClientID {
		to, err := l.cfg.Hydra.answer(r.Context(), "consent", "reject", challenge,
			rejection{Error: "access_denied", ErrorDescription: "only the platform's own client may log users in"})
		if err != nil {
			l.challengeError(w, err)
			return
		}
		http.Redirect(w, r, to, http.StatusFound)
		return
	}
	var a acceptConsent
	for _, s := range req.RequestedScope {
		if slices.Contains(grantable, s) {
			a.GrantScope = append(a.GrantScope, s)
		}
	}
	a.GrantAccessTokenAudience = req.RequestedAccessTokenAudience
	var groups []string
	if gs, ok := req.Context[GroupsClaim].([]any); ok {
		for _, g := range gs {
			if s, ok := g.(string); ok {
				groups = append(groups, s)
			}
		}
	}
	a.Session.IDToken = map[string]any{GroupsClaim: cleanGroups(groups)}
	to, err := l.cfg.Hydra.answer(r.Context(), "consent", "accept", challenge, a)
	if err != nil {
		l.challengeError(w, err)
		return
	}
	http.Redirect(w, r, to, http.StatusFound)
}

// logoutApp is the provider's logout app: a logout needs no confirmation.
func (l *Login) logoutApp(w http.ResponseWriter, r *http.Request) {
	to, err := l.cfg.Hydra.answer(r.Context(), "logout", "accept", r.URL.Query().Get("logout_challenge"), nil)
	if err != nil {
		l.challengeError(w, err)
		return
	}
	http.Redirect(w, r, to, http.StatusFound)
}

// loggedOut tells the user they are logged out.
func (l *Login) loggedOut(w http.ResponseWriter, _ *http.Request) {
	http.SetCookie(w, cookie(SessionCookie, "", "/", time.Time{}))
	l.render(w, http.StatusOK, pageData{Title: "Logged out", Message: "You are logged out.", Action: LoginPath})
}

// challengeError answers a challenge the provider does not know, or a
// provider that did not answer.
func (l *Login) challengeError(w http.ResponseWriter, err error) {
	if errors.Is(err, errNotFound) {
		l.fail(w, http.StatusBadRequest, "This login has expired or was used already. Log in again.", nil)
		return
	}
	l.fail(w, http.StatusBadGateway, "The identity provider did not answer. Try again later.", err)
}
