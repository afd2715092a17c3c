package login

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
)

// TokenPrefix starts a login token: a session the gateway issued to a
// client that logged in with a password at LoginPath (the t9k CLI's
// "t9k config auth"), sent as "Authorization: Bearer <token>".
const TokenPrefix = gatewayapi.TokenPrefix

// tokenSeal is the name a login token is sealed under, so that a session
// cookie's value is no token and a token no cookie.
const tokenSeal = "t9k-token"

// passwordLogin checks a user's password with the directory, under the
// same throttle as the login page, and answers a login token that lasts
// as long as a browser session.
func (l *Login) passwordLogin(w http.ResponseWriter, r *http.Request) {
	noStore(w)
	// A JSON body cannot come from another site's form without the
	// browser asking first (CORS), which the gateway never allows.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, "a password login is a JSON body with Content-Type application/json", http.StatusUnsupportedMediaType)
		return
	}
	var in gatewayapi.PasswordLogin
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&in); err != nil {
		http.Error(w, "the body is not a JSON object with username and password", http.StatusBadRequest)
		return
	}
	id, code, err := l.checkPassword(r.Context(), strings.TrimSpace(in.Username), in.Password)
	switch {
	case code == http.StatusServiceUnavailable:
		l.cfg.Log.Error(err, "The directory failed")
		http.Error(w, "the directory cannot check passwords now; try again later", code)
		return
	case err != nil:
		http.Error(w, err.Error(), code)
		return
	}
	s := Session{User: id.Name, Groups: cleanGroups(id.Groups), Expires: time.Now().Add(l.cfg.SessionTTL), CSRF: randomToken()}
	v, err := l.seal.seal(tokenSeal, s)
	if err != nil {
		l.cfg.Log.Error(err, "Sealing a login token failed")
		http.Error(w, "the login could not be kept", http.StatusInternalServerError)
		return
	}
	l.cfg.Log.Info("Logged in with a password", "user", s.User, "groups", len(s.Groups))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(gatewayapi.TokenAnswer{Token: TokenPrefix + v, User: s.User, Groups: s.Groups, Expires: s.Expires})
}

// TokenSession returns the session of a login token, if it is a valid
// one.
func (l *Login) TokenSession(token string) (*Session, bool) {
	v, ok := strings.CutPrefix(token, TokenPrefix)
	if !ok {
		return nil, false
	}
	var s Session
	if err := l.seal.open(tokenSeal, v, &s); err != nil || s.User == "" || !time.Now().Before(s.Expires) {
		return nil, false
	}
	return &s, true
}
