package login

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
)

// Cookie names. Both are the gateway's own: the workloads never see them.
const (
	// SessionCookie holds a sealed Session.
	SessionCookie = "t9k-session"
	// FlowCookie holds the sealed state of a login in progress.
	FlowCookie = "t9k-login"
	// FormCookie holds the login form's CSRF token.
	FormCookie = "t9k-login-form"
)

// ProviderCookiePrefix starts the names of the identity provider's cookies
// (Ory Hydra's login and consent CSRF cookies and its session).
const ProviderCookiePrefix = "ory_hydra_"

// MinKeyBytes is the least material a session key is made from.
const MinKeyBytes = 32

// maxCookieBytes bounds a sealed cookie: browsers keep about 4 KiB per
// cookie, name and attributes included.
const maxCookieBytes = 3800

// Session is a logged-in browser.
type Session struct {
	// User is the ID token's subject: the directory's user name.
	User string `json:"u"`
	// Groups are the user's groups from the ID token.
	Groups []string `json:"g,omitempty"`
	// Expires ends the session.
	Expires time.Time `json:"e"`
	// CSRF is the token that requests changing state with this session
	// carry in CSRFHeader.
	CSRF string `json:"c"`
}

// CSRFHeader carries a session's CSRF token on requests that change state.
const CSRFHeader = gatewayapi.CSRFHeader

// errSealed: a cookie that does not open under the key, or is malformed.
var errSealed = errors.New("the cookie is not valid")

// sealer seals and opens cookie values with AES-256-GCM; the cookie's name
// is authenticated with it, so a value cannot move to another cookie.
type sealer struct {
	aead cipher.AEAD
}

// newSealer derives the AES key from key material of at least MinKeyBytes.
func newSealer(material []byte) (*sealer, error) {
	if len(material) < MinKeyBytes {
		return nil, fmt.Errorf("the session key has %d bytes, want at least %d", len(material), MinKeyBytes)
	}
	k := sha256.Sum256(material)
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, fmt.Errorf("making the session cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("making the session cipher: %w", err)
	}
	return &sealer{aead: aead}, nil
}

// seal returns v as JSON, encrypted and base64url-encoded.
func (s *sealer) seal(name string, v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding the %s cookie: %w", name, err)
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	_, _ = rand.Read(nonce) // never fails; it crashes the program instead
	out := base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(name)))
	if len(out) > maxCookieBytes {
		return "", fmt.Errorf("the %s cookie would have %d bytes, more than a browser keeps", name, len(out))
	}
	return out, nil
}

// open reverses seal into v.
func (s *sealer) open(name, value string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return errSealed
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(name))
	if err != nil {
		return errSealed
	}
	if err := json.Unmarshal(plain, v); err != nil {
		return errSealed
	}
	return nil
}

// cookie returns a Secure, HttpOnly, SameSite=Lax cookie for path.
func cookie(name, value, path string, expires time.Time) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: path, Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode}
	if value == "" {
		c.MaxAge = -1
	} else {
		c.Expires = expires
	}
	return c
}

// randomToken returns 128 random bits as text.
func randomToken() string { return rand.Text() }
