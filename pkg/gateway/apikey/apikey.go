// Package apikey keeps the gateway's API keys: long-lived credentials a
// user makes for themself, each carrying a subset of the user's rights
// (its scopes), shown once at creation and stored only as a hash, one
// Secret per key in the gateway's namespace.
//
// A key is a random UUID, the shape of the platform's keys. Its Secret is
// named apikey-<ID>, where the ID is the first 16 hex digits of the key's
// SHA-256; the Secret holds the whole hash, the owner (user name, UID and
// groups at creation), the key's name and scopes. A lookup reads the
// Secret of the ID and compares the hashes in constant time.
package apikey

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/members"
)

// Limits on what a user may store.
const (
	// MaxKeysPerUser bounds a user's keys.
	MaxKeysPerUser = 20
	// MaxNameLength bounds a key's name.
	MaxNameLength = 63
)

// Labels and keys of the keys' Secrets.
const (
	// LabelKey marks the Secrets of keys; its value is OwnerHash of the
	// owner, by which a user's keys are listed.
	LabelKey = "tensorstack.dev/apikey-owner"
	// LastUsedAnnotation holds when the key was last used, RFC 3339.
	LastUsedAnnotation = "tensorstack.dev/apikey-last-used"
	// hashKey holds the hex SHA-256 of the key.
	hashKey = "sha256"
	// recordKey holds the Record as JSON.
	recordKey = "record"
	// namePrefix starts the Secrets' names.
	namePrefix = "apikey-"
	// idLength is the length of an ID, in hex digits.
	idLength = 16
)

// Record is what a key's Secret tells of it.
type Record struct {
	User   string          `json:"user"`
	UID    string          `json:"uid,omitempty"`
	Groups []string        `json:"groups,omitempty"`
	Name   string          `json:"name"`
	Scopes []members.Scope `json:"scopes"`
}

// Key is a stored key, without its secret.
type Key struct {
	Record
	ID       string
	Created  time.Time
	LastUsed time.Time
}

// Errors of the store.
var (
	// ErrUnknown: no key has this value or ID (or it was revoked).
	ErrUnknown = errors.New("unknown API key")
	// ErrInvalid: the request to create a key is not valid; the error
	// says which field.
	ErrInvalid = errors.New("invalid API key request")
	// ErrTooMany: the user has MaxKeysPerUser keys already.
	ErrTooMany = fmt.Errorf("a user may have at most %d API keys", MaxKeysPerUser)
)

// Shaped reports whether s has the shape of a key: a UUID in its 36
// character form. Anything else is not looked up.
func Shaped(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

// OwnerHash returns the value of LabelKey of user: 16 hex digits of the
// SHA-256 of the name, as user names are not label values.
func OwnerHash(user string) string {
	sum := sha256.Sum256([]byte(user))
	return hex.EncodeToString(sum[:])[:idLength]
}

// hashOf returns the hex SHA-256 of a key.
func hashOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Store keeps keys as Secrets of Namespace, remembering lookups for TTL so
// that a revoked key stops working within TTL, and recording a key's last
// use at most every LastUsedEvery.
type Store struct {
	c         client.Client
	namespace string
	ttl       time.Duration
	every     time.Duration
	now       func() time.Time

	mu      sync.Mutex
	lookups map[string]lookup
	written map[string]time.Time
}

// lookup is a remembered Lookup.
type lookup struct {
	key     Key
	err     error
	expires time.Time
}

// maxLookups bounds the remembered lookups; past it they are forgotten.
const maxLookups = 4096

// NewStore returns a store of the Secrets of namespace, read and written
// with c (uncached: Secrets are never watched).
func NewStore(c client.Client, namespace string, ttl, lastUsedEvery time.Duration) *Store {
	return &Store{c: c, namespace: namespace, ttl: ttl, every: lastUsedEvery, now: time.Now, lookups: map[string]lookup{}, written: map[string]time.Time{}}
}

// Validate checks a request for a key named name with scopes.
func Validate(name string, scopes []members.Scope) error {
	if name == "" || len(name) > MaxNameLength {
		return fmt.Errorf("%w: name must be 1 to %d characters", ErrInvalid, MaxNameLength)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: name must not hold control characters", ErrInvalid)
		}
	}
	if err := members.ValidateScopes(scopes); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// Create makes a key for owner (its user, UID and groups) named name with
// scopes, and returns its value, which is never stored nor shown again.
func (s *Store) Create(ctx context.Context, owner Record, name string, scopes []members.Scope) (string, Key, error) {
	if err := Validate(name, scopes); err != nil {
		return "", Key{}, err
	}
	if owner.User == "" {
		return "", Key{}, fmt.Errorf("%w: no user", ErrInvalid)
	}
	keys, err := s.List(ctx, owner.User)
	if err != nil {
		return "", Key{}, err
	}
	if len(keys) >= MaxKeysPerUser {
		return "", Key{}, ErrTooMany
	}
	value := uuid.NewString()
	hash := hashOf(value)
	rec := Record{User: owner.User, UID: owner.UID, Groups: slices.Clone(owner.Groups), Name: name, Scopes: slices.Compact(slices.Sorted(slices.Values(scopes)))}
	data, err := json.Marshal(rec)
	if err != nil {
		return "", Key{}, fmt.Errorf("encoding the key's record: %w", err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: namePrefix + hash[:idLength], Labels: map[string]string{LabelKey: OwnerHash(owner.User)}},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{hashKey: []byte(hash), recordKey: data},
	}
	if err := s.c.Create(ctx, secret); err != nil {
		return "", Key{}, fmt.Errorf("storing the API key: %w", err)
	}
	return value, Key{Record: rec, ID: hash[:idLength], Created: secret.CreationTimestamp.Time}, nil
}

// List returns the keys of user.
func (s *Store) List(ctx context.Context, user string) ([]Key, error) {
	list := &corev1.SecretList{}
	if err := s.c.List(ctx, list, client.InNamespace(s.namespace), client.MatchingLabels{LabelKey: OwnerHash(user)}); err != nil {
		return nil, fmt.Errorf("listing API keys: %w", err)
	}
	keys := make([]Key, 0, len(list.Items))
	for i := range list.Items {
		k, err := keyOf(&list.Items[i])
		if err != nil || k.User != user {
			continue
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Key) int { return a.Created.Compare(b.Created) })
	return keys, nil
}

// Delete revokes the key id of user: ErrUnknown when user has none such.
// Lookups of it stop within the store's TTL.
func (s *Store) Delete(ctx context.Context, user, id string) error {
	secret, err := s.get(ctx, id)
	if err != nil {
		return err
	}
	k, err := keyOf(secret)
	if err != nil || k.User != user {
		return ErrUnknown
	}
	err = s.c.Delete(ctx, secret, client.Preconditions{UID: &secret.UID})
	if apierrors.IsNotFound(err) {
		return ErrUnknown
	}
	if err != nil {
		return fmt.Errorf("deleting the API key: %w", err)
	}
	return nil
}

// Lookup returns the key of value: ErrUnknown when there is none.
func (s *Store) Lookup(ctx context.Context, value string) (Key, error) {
	hash := hashOf(value)
	now := s.now()
	s.mu.Lock()
	l, ok := s.lookups[hash]
	s.mu.Unlock()
	if !ok || !now.Before(l.expires) {
		l = lookup{expires: now.Add(s.ttl)}
		l.key, l.err = s.lookup(ctx, hash)
		if l.err != nil && !errors.Is(l.err, ErrUnknown) {
			return Key{}, l.err
		}
		s.remember(hash, l)
	}
	if l.err == nil {
		s.touch(ctx, l.key.ID, now)
	}
	return l.key, l.err
}

// lookup reads the key of hash.
func (s *Store) lookup(ctx context.Context, hash string) (Key, error) {
	secret, err := s.get(ctx, hash[:idLength])
	if err != nil {
		return Key{}, err
	}
	if subtle.ConstantTimeCompare(secret.Data[hashKey], []byte(hash)) != 1 {
		return Key{}, ErrUnknown
	}
	return keyOf(secret)
}

// remember keeps a lookup, forgetting all when maxLookups are kept.
func (s *Store) remember(hash string, l lookup) {
	if s.ttl <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lookups) >= maxLookups {
		clear(s.lookups)
	}
	s.lookups[hash] = l
}

// get reads the Secret of the key id.
func (s *Store) get(ctx context.Context, id string) (*corev1.Secret, error) {
	if len(id) != idLength || strings.Trim(id, "0123456789abcdef") != "" {
		return nil, ErrUnknown
	}
	secret := &corev1.Secret{}
	err := s.c.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: namePrefix + id}, secret)
	if apierrors.IsNotFound(err) {
		return nil, ErrUnknown
	}
	if err != nil {
		return nil, fmt.Errorf("reading an API key: %w", err)
	}
	if _, ok := secret.Labels[LabelKey]; !ok {
		return nil, ErrUnknown
	}
	return secret, nil
}

// touch records that the key id was used at now, unless that was recorded
// less than the store's LastUsedEvery ago. A failure is not the caller's:
// the request goes on.
func (s *Store) touch(ctx context.Context, id string, now time.Time) {
	s.mu.Lock()
	if last, ok := s.written[id]; ok && now.Sub(last) < s.every {
		s.mu.Unlock()
		return
	}
	if len(s.written) >= maxLookups {
		clear(s.written)
	}
	s.written[id] = now
	s.mu.Unlock()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, LastUsedAnnotation, now.UTC().Format(time.RFC3339))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: namePrefix + id}}
	_ = s.c.Patch(ctx, secret, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// keyOf decodes the key of a Secret.
func keyOf(secret *corev1.Secret) (Key, error) {
	var rec Record
	if err := json.Unmarshal(secret.Data[recordKey], &rec); err != nil {
		return Key{}, fmt.Errorf("%w: the record of %s: %w", ErrUnknown, secret.Name, err)
	}
	k := Key{Record: rec, ID: strings.TrimPrefix(secret.Name, namePrefix), Created: secret.CreationTimestamp.Time}
	if t, err := time.Parse(time.RFC3339, secret.Annotations[LastUsedAnnotation]); err == nil {
		k.LastUsed = t
	}
	return k, nil
}
