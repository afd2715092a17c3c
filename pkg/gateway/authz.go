package gateway

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/members"
)

// ProxySubresource is the subresource authorization asks about: a user may
// open a workload through the gateway when RBAC lets them get
// <resource>/proxy of it, as the project member role does.
const ProxySubresource = "proxy"

// scopeOf maps the authorized resources to the API key scope that reaches
// them.
var scopeOf = map[Resource]members.Scope{
	Notebooks:        members.Build,
	TensorBoards:     members.Build,
	Explorers:        members.Build,
	MLServices:       members.Deploy,
	SimpleMLServices: members.Deploy,
}

// Decision is an authorization's answer.
type Decision struct {
	Allowed bool
	// Reason says why not, for the answer and the log.
	Reason string
}

// Authorizer decides whether a user may open a workload.
type Authorizer interface {
	Authorize(ctx context.Context, u *User, resource Resource, namespace, name string) (Decision, error)
}

// SARAuthorizer asks the API server by a SubjectAccessReview of get on the
// workload's proxy subresource, and keeps each answer, allow or deny, for
// TTL. A credential with scopes (an API key) must also carry the scope of
// the resource: its rights are the user's and the key's both.
type SARAuthorizer struct {
	c     client.Client
	cache *ttlCache[[sha256.Size]byte, Decision]
}

// NewSARAuthorizer returns an authorizer asking with c.
func NewSARAuthorizer(c client.Client, ttl time.Duration, size int) *SARAuthorizer {
	return &SARAuthorizer{c: c, cache: newTTLCache[[sha256.Size]byte, Decision](ttl, size)}
}

// Authorize implements Authorizer.
func (a *SARAuthorizer) Authorize(ctx context.Context, u *User, resource Resource, namespace, name string) (Decision, error) {
	if u.Scopes != nil {
		scope, ok := scopeOf[resource]
		if !ok || !slices.Contains(u.Scopes, scope) {
			return Decision{Reason: fmt.Sprintf("the API key has no %q scope", scope)}, nil
		}
	}
	key := reviewKey(u, resource, namespace, name)
	return a.cache.load(ctx, key, func(ctx context.Context) (Decision, error) {
		ok, err := reviewAccess(ctx, a.c, u, authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: "get", Group: group, Resource: string(resource), Subresource: ProxySubresource, Name: name,
		})
		if err != nil {
			return Decision{}, err
		}
		d := Decision{Allowed: ok}
		if !d.Allowed {
			d.Reason = fmt.Sprintf("%s may not get %s/%s of %s/%s", u.Name, resource, ProxySubresource, namespace, name)
		}
		return d, nil
	})
}

// reviewAccess asks the API server by a SubjectAccessReview whether u may do
// attrs.
func reviewAccess(ctx context.Context, c client.Client, u *User, attrs authorizationv1.ResourceAttributes) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Name, UID: u.UID, Groups: u.Groups, Extra: extraOf(u.Extra), ResourceAttributes: &attrs,
	}}
	if err := c.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("asking for access: %w", err)
	}
	return sar.Status.Allowed && !sar.Status.Denied, nil
}

// reviewKey is the cache key of a review: a hash of everything the review
// asks about, fields separated by a byte no name holds.
func reviewKey(u *User, resource Resource, namespace, name string) [sha256.Size]byte {
	var b strings.Builder
	for _, s := range []string{u.Name, u.UID, string(resource), namespace, name} {
		b.WriteString(s)
		b.WriteByte(0)
	}
	for _, g := range u.Groups {
		b.WriteString(g)
		b.WriteByte(1)
	}
	for _, k := range slices.Sorted(maps.Keys(u.Extra)) {
		b.WriteString(k)
		b.WriteByte(2)
		for _, v := range u.Extra[k] {
			b.WriteString(v)
			b.WriteByte(3)
		}
	}
	return sha256.Sum256([]byte(b.String()))
}

// extraOf converts a user's extra to a review's.
func extraOf(extra map[string][]string) map[string]authorizationv1.ExtraValue {
	if len(extra) == 0 {
		return nil
	}
	out := make(map[string]authorizationv1.ExtraValue, len(extra))
	for k, v := range extra {
		out[k] = v
	}
	return out
}
