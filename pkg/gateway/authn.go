package gateway

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/gateway/apikey"
	"github.com/accelstack/accelstack/pkg/gateway/login"
	"github.com/accelstack/accelstack/pkg/members"
)

// User is who a request comes from.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
	// Scopes bound the credential: nil for one that carries all of the
	// user's rights (a Kubernetes token), the key's scopes for an API key.
	Scopes []members.Scope
	// KeyID is the API key's ID when the credential is one.
	KeyID string

	// session is the login session when the credential is one.
	session *login.Session
}

// Credential errors, answered 401.
var (
	// ErrNoCredential: the request carries no credential.
	ErrNoCredential = errors.New("no credential: send Authorization: Bearer <token or API key>")
	// ErrBadCredential: the credential is not valid (unknown, expired,
	// revoked); the message never holds it.
	ErrBadCredential = errors.New("the credential is not valid")
)

// queryCredentials are query parameters that look like a credential: the
// gateway refuses them, as URLs end up in logs and browser histories.
var queryCredentials = []string{"apikey", "api_key", "api-key", "access_token"}

// QueryCredential returns the name of a credential-like query parameter
// of r, or "".
func QueryCredential(r *http.Request) string {
	q := r.URL.Query()
	for _, k := range queryCredentials {
		if q.Has(k) {
			return k
		}
	}
	return ""
}

// Authenticator tells who sent a request.
type Authenticator interface {
	// Authenticate returns the request's user, ErrNoCredential,
	// ErrBadCredential or another error when it could not decide.
	Authenticate(ctx context.Context, r *http.Request) (*User, error)
}

// BearerAuthenticator authenticates "Authorization: Bearer" credentials:
// API keys (UUID-shaped) by the key store, anything else as a Kubernetes
// token by a TokenReview, whose answers it keeps for TTL, both valid and
// not, keyed by a hash of the token.
type BearerAuthenticator struct {
	keys      *apikey.Store
	c         client.Client
	audiences []string
	cache     *ttlCache[[sha256.Size]byte, tokenResult]
}

// tokenResult is a TokenReview's answer.
type tokenResult struct {
	user *User
	ok   bool
}

// NewBearerAuthenticator returns an authenticator that looks API keys up in
// keys and reviews tokens with c, for audiences (none: the API server's).
func NewBearerAuthenticator(keys *apikey.Store, c client.Client, audiences []string, ttl time.Duration, size int) *BearerAuthenticator {
	return &BearerAuthenticator{keys: keys, c: c, audiences: audiences, cache: newTTLCache[[sha256.Size]byte, tokenResult](ttl, size)}
}

// Authenticate implements Authenticator.
func (a *BearerAuthenticator) Authenticate(ctx context.Context, r *http.Request) (*User, error) {
	cred, ok := bearer(r)
	if !ok {
		return nil, ErrNoCredential
	}
	if apikey.Shaped(cred) {
		k, err := a.keys.Lookup(ctx, cred)
		if errors.Is(err, apikey.ErrUnknown) {
			return nil, ErrBadCredential
		}
		if err != nil {
			return nil, fmt.Errorf("looking the API key up: %w", err)
		}
		return &User{Name: k.User, UID: k.UID, Groups: k.Groups, Scopes: k.Scopes, KeyID: k.ID}, nil
	}
	return a.reviewToken(ctx, cred)
}

// reviewToken authenticates a Kubernetes token.
func (a *BearerAuthenticator) reviewToken(ctx context.Context, token string) (*User, error) {
	key := sha256.Sum256([]byte(token))
	res, err := a.cache.load(ctx, key, func(ctx context.Context) (tokenResult, error) {
		review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: a.audiences}}
		if err := a.c.Create(ctx, review); err != nil {
			return tokenResult{}, fmt.Errorf("reviewing a token: %w", err)
		}
		res := tokenResult{ok: review.Status.Authenticated}
		if res.ok {
			info := review.Status.User
			res.user = &User{Name: info.Username, UID: info.UID, Groups: info.Groups}
			if len(info.Extra) > 0 {
				res.user.Extra = map[string][]string{}
				for k, v := range info.Extra {
					res.user.Extra[k] = v
				}
			}
		}
		return res, nil
	})
	if err != nil {
		return nil, err
	}
	return res.result()
}

// result returns the user of a review, or ErrBadCredential.
func (r tokenResult) result() (*User, error) {
	if !r.ok {
		return nil, ErrBadCredential
	}
	u := *r.user
	u.Groups = slices.Clone(u.Groups)
	return &u, nil
}

// authenticatedGroup is the group Kubernetes gives every authenticated
// user; RBAC bindings to it hold for logged-in users too.
const authenticatedGroup = "system:authenticated"

// SessionAuthenticator authenticates a request without an Authorization
// header by its login session cookie, and every other request by Next: a
// bearer credential always wins over a cookie.
type SessionAuthenticator struct {
	Login *login.Login
	Next  Authenticator
}

// Authenticate implements Authenticator.
func (a SessionAuthenticator) Authenticate(ctx context.Context, r *http.Request) (*User, error) {
	if r.Header.Get("Authorization") == "" {
		if s, ok := a.Login.Session(r); ok {
			return sessionUser(s, s), nil
		}
	}
	if cred, ok := bearer(r); ok && strings.HasPrefix(cred, login.TokenPrefix) {
		s, ok := a.Login.TokenSession(cred)
		if !ok {
			return nil, ErrBadCredential
		}
		// A token is no cookie: a request with it needs no CSRF token.
		return sessionUser(s, nil), nil
	}
	return a.Next.Authenticate(ctx, r)
}

// sessionUser returns the user of a login; cookie is the session when it
// came in a cookie.
func sessionUser(s, cookie *login.Session) *User {
	return &User{Name: s.User, Groups: append(slices.Clone(s.Groups), authenticatedGroup), session: cookie}
}

// bearer returns the credential of the request's Authorization header.
func bearer(r *http.Request) (string, bool) {
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	cred = strings.TrimSpace(cred)
	return cred, cred != ""
}
