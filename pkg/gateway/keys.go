package gateway

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/accelstack/accelstack/pkg/gateway/apikey"
	"github.com/accelstack/accelstack/pkg/members"
)

// keysAPI serves a user's API keys at KeysPath:
//
//	POST   KeysPath       {"name": ..., "scopes": [...]}: 201 with the key, shown once
//	GET    KeysPath       the user's keys, without their values
//	DELETE KeysPath/<id>  revokes one: 204, or 404 when the user has no such key
//
// Only a login or a Kubernetes token may manage keys: a request with an
// API key is refused, so that a key can never make a wider one.
type keysAPI struct {
	store *apikey.Store
	authn Authenticator
	log   logr.Logger
}

// maxKeyRequest bounds the body of a create request.
const maxKeyRequest = 4 << 10

// keyRequest is the body of a create request.
type keyRequest struct {
	Name   string          `json:"name"`
	Scopes []members.Scope `json:"scopes"`
}

// keyView is a key as the API shows it.
type keyView struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Scopes   []members.Scope `json:"scopes"`
	Created  time.Time       `json:"created"`
	LastUsed *time.Time      `json:"lastUsed,omitempty"`
	// Key is the key's value, in the answer to its creation only.
	Key string `json:"key,omitempty"`
}

// viewOf returns the view of k.
func viewOf(k apikey.Key) keyView {
	v := keyView{ID: k.ID, Name: k.Name, Scopes: k.Scopes, Created: k.Created}
	if !k.LastUsed.IsZero() {
		v.LastUsed = &k.LastUsed
	}
	return v
}

func (a *keysAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, ok := authenticateAccount(w, r, a.authn, a.log, "API keys")
	if !ok {
		return
	}
	id := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, KeysPath), "/")
	switch {
	case r.Method == http.MethodGet && id == "":
		a.list(w, r, user)
	case r.Method == http.MethodPost && id == "":
		a.create(w, r, user)
	case r.Method == http.MethodDelete && id != "":
		a.delete(w, r, user, id)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (a *keysAPI) list(w http.ResponseWriter, r *http.Request, user *User) {
	keys, err := a.store.List(r.Context(), user.Name)
	if err != nil {
		a.fail(w, err)
		return
	}
	items := make([]keyView, 0, len(keys))
	for _, k := range keys {
		items = append(items, viewOf(k))
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

func (a *keysAPI) create(w http.ResponseWriter, r *http.Request, user *User) {
	var req keyRequest
	d := json.NewDecoder(io.LimitReader(r.Body, maxKeyRequest))
	d.DisallowUnknownFields()
	if err := d.Decode(&req); err != nil {
		http.Error(w, "the body is not a key request: "+err.Error(), http.StatusBadRequest)
		return
	}
	value, k, err := a.store.Create(r.Context(), apikey.Record{User: user.Name, UID: user.UID, Groups: user.Groups}, req.Name, req.Scopes)
	if err != nil {
		a.fail(w, err)
		return
	}
	a.log.Info("API key created", "user", user.Name, "id", k.ID, "scopes", k.Scopes)
	v := viewOf(k)
	v.Key = value
	writeJSON(w, http.StatusCreated, v)
}

func (a *keysAPI) delete(w http.ResponseWriter, r *http.Request, user *User, id string) {
	if err := a.store.Delete(r.Context(), user.Name, id); err != nil {
		a.fail(w, err)
		return
	}
	a.log.Info("API key revoked", "user", user.Name, "id", id)
	w.WriteHeader(http.StatusNoContent)
}

// fail answers a store error.
func (a *keysAPI) fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, apikey.ErrInvalid), errors.Is(err, apikey.ErrTooMany):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case errors.Is(err, apikey.ErrUnknown):
		http.Error(w, "no such API key", http.StatusNotFound)
	default:
		a.log.Error(err, "API key store failed")
		http.Error(w, "the API key store is unavailable", http.StatusServiceUnavailable)
	}
}

// authenticateAccount authenticates a request to manage what (API keys,
// members): credentials in the query string are refused, and so is an API
// key, so that a key can never make a wider one. It answers the refusal
// and returns false, or returns the user.
func authenticateAccount(w http.ResponseWriter, r *http.Request, authn Authenticator, log logr.Logger, what string) (*User, bool) {
	user, ok := authenticate(w, r, authn, log)
	if !ok {
		return nil, false
	}
	if user.KeyID != "" {
		http.Error(w, "forbidden: API keys cannot manage "+what+"; use a login or a Kubernetes token", http.StatusForbidden)
		return nil, false
	}
	if why := csrfRefusal(r, user); why != "" {
		http.Error(w, "forbidden: "+why, http.StatusForbidden)
		return nil, false
	}
	return user, true
}

// authenticate returns the caller of r, or answers why there is none:
// credentials in the query string are refused.
func authenticate(w http.ResponseWriter, r *http.Request, authn Authenticator, log logr.Logger) (*User, bool) {
	if q := QueryCredential(r); q != "" {
		http.Error(w, "credentials are not accepted in the query string ("+q+"): send Authorization: Bearer", http.StatusBadRequest)
		return nil, false
	}
	user, err := authn.Authenticate(r.Context(), r)
	if err != nil {
		authnError(w, log, err)
		return nil, false
	}
	return user, true
}

// writeJSON answers v as JSON with code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
