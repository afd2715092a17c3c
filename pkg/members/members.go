// Package members holds a project's membership: the scopes a member may
// have (build, deploy), the ClusterRole each grants, the project admin's
// role, and the RoleBindings in the project's namespace that make users
// and groups members. The RoleBindings are the membership's only record:
// what RBAC enforces is what the members API shows.
package members

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Scope is a part of a project a member works in.
type Scope string

// The scopes: build reaches the Build Console's workloads (jobs,
// workflows, Notebooks, TensorBoards, Explorers, storage), deploy the
// Deploy Console's (MLServices, SimpleMLServices, their runtimes).
const (
	Build  Scope = "build"
	Deploy Scope = "deploy"
)

// Scopes are the valid scopes.
var Scopes = []Scope{Build, Deploy}

// The project roles, ClusterRoles of deploy/controllers/project-roles.yaml
// that member RoleBindings bind in a project's namespace.
const (
	// BuildClusterRole holds the build scope's rights.
	BuildClusterRole = "accelstack-project-build"
	// DeployClusterRole holds the deploy scope's rights.
	DeployClusterRole = "accelstack-project-deploy"
	// AdminClusterRole is the project admin's: managing the members.
	AdminClusterRole = "accelstack-project-admin"
)

// ClusterRole returns the ClusterRole of scope s.
func ClusterRole(s Scope) string {
	if s == Deploy {
		return DeployClusterRole
	}
	return BuildClusterRole
}

// Labels of a member RoleBinding.
const (
	// RoleLabelKey marks a member RoleBinding; its value is the scope it
	// grants, or AdminRole.
	RoleLabelKey = "tensorstack.dev/project-member"
	// AdminRole is RoleLabelKey's value on the project admin's binding.
	AdminRole = "admin"
)

// The kinds of member.
const (
	UserKind  = rbacv1.UserKind
	GroupKind = rbacv1.GroupKind
)

// MaxMembers bounds the members of one project, so that listing them stays
// small.
const MaxMembers = 1000

// maxNameLength bounds a member's name: a Kubernetes user or group name.
const maxNameLength = 253

// Member is a user or group of a project, with its scopes.
type Member struct {
	// Kind is User or Group.
	Kind string `json:"kind"`
	// Name is the user's or group's name as the API server knows it.
	Name string `json:"name"`
	// Scopes are the parts of the project the member works in.
	Scopes []Scope `json:"scopes"`
	// Admin tells the project admin, who manages the members.
	Admin bool `json:"admin,omitempty"`
}

// ErrInvalid is the error of a member that cannot be one.
var ErrInvalid = errors.New("invalid member")

// ValidateSubject checks a member's kind and name.
func ValidateSubject(kind, name string) error {
	if kind != UserKind && kind != GroupKind {
		return fmt.Errorf("%w: kind %q is not %s or %s", ErrInvalid, kind, UserKind, GroupKind)
	}
	if name == "" || len(name) > maxNameLength || !utf8.ValidString(name) {
		return fmt.Errorf("%w: name must be 1 to %d characters of UTF-8", ErrInvalid, maxNameLength)
	}
	if strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0 {
		return fmt.Errorf("%w: name %q holds a space or a control character", ErrInvalid, name)
	}
	return nil
}

// Validate checks a member: its subject, and scopes that are valid and
// at least one (a member without scopes is no member: remove it).
func (m Member) Validate() error {
	if err := ValidateSubject(m.Kind, m.Name); err != nil {
		return err
	}
	if err := ValidateScopes(m.Scopes); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// ValidateScopes checks scopes: at least one, each valid.
func ValidateScopes(scopes []Scope) error {
	if len(scopes) == 0 {
		return fmt.Errorf("scopes must name at least one of %v", Scopes)
	}
	for _, s := range scopes {
		if !slices.Contains(Scopes, s) {
			return fmt.Errorf("scopes: %q is not one of %v", s, Scopes)
		}
	}
	return nil
}

// BindingName is the name of the RoleBinding giving the subject kind/name
// role (a scope or AdminRole): user and group names may hold characters no
// object name may, so the subject is named by its hash.
func BindingName(kind, name, role string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + name))
	return "accelstack-member-" + role + "-" + hex.EncodeToString(sum[:8])
}

// binding returns the RoleBinding giving kind/name role in namespace ns.
func binding(ns, kind, name, role, clusterRole string) *rbacv1.RoleBinding {
	subject := rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: BindingName(kind, name, role), Labels: map[string]string{RoleLabelKey: role}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{subject},
	}
}

// roleOf returns the role a member RoleBinding grants and whether it is
// one: labelled, binding the role's ClusterRole to one user or group.
func roleOf(rb *rbacv1.RoleBinding) (role string, subject rbacv1.Subject, ok bool) {
	role = rb.Labels[RoleLabelKey]
	want := AdminClusterRole
	if role != AdminRole {
		if !slices.Contains(Scopes, Scope(role)) {
			return "", subject, false
		}
		want = ClusterRole(Scope(role))
	}
	if rb.RoleRef.Kind != "ClusterRole" || rb.RoleRef.Name != want || len(rb.Subjects) != 1 {
		return "", subject, false
	}
	subject = rb.Subjects[0]
	if (subject.Kind != UserKind && subject.Kind != GroupKind) || rb.Name != BindingName(subject.Kind, subject.Name, role) {
		return "", subject, false
	}
	return role, subject, true
}

// List returns the members of the project of namespace ns, sorted by kind
// and name: the subjects of its member RoleBindings.
func List(ctx context.Context, c client.Reader, ns string) ([]Member, error) {
	var list rbacv1.RoleBindingList
	if err := c.List(ctx, &list, client.InNamespace(ns), client.HasLabels{RoleLabelKey}); err != nil {
		return nil, fmt.Errorf("listing the member RoleBindings of %s: %w", ns, err)
	}
	byKey := map[[2]string]*Member{}
	for i := range list.Items {
		role, s, ok := roleOf(&list.Items[i])
		if !ok {
			continue
		}
		m := byKey[[2]string{s.Kind, s.Name}]
		if m == nil {
			m = &Member{Kind: s.Kind, Name: s.Name, Scopes: []Scope{}}
			byKey[[2]string{s.Kind, s.Name}] = m
		}
		if role == AdminRole {
			m.Admin = true
		} else {
			m.Scopes = append(m.Scopes, Scope(role))
		}
	}
	out := make([]Member, 0, len(byKey))
	for _, m := range byKey {
		slices.Sort(m.Scopes)
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b Member) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// Errors of Set and Get.
var (
	// ErrNoMember is the error of a subject that is no member.
	ErrNoMember = errors.New("no member")
	// ErrTooMany is the error of a member over MaxMembers.
	ErrTooMany = errors.New("too many members")
	// ErrConflict is the error of a RoleBinding in the way of a member's.
	ErrConflict = errors.New("conflict")
)

// Get returns the member kind/name of the project of namespace ns, or an
// error wrapping ErrNoMember.
func Get(ctx context.Context, c client.Reader, ns, kind, name string) (Member, error) {
	all, err := List(ctx, c, ns)
	if err != nil {
		return Member{}, err
	}
	i := slices.IndexFunc(all, func(m Member) bool { return m.Kind == kind && m.Name == name })
	if i < 0 {
		return Member{}, fmt.Errorf("%w: %s %q of %s", ErrNoMember, kind, name, ns)
	}
	return all[i], nil
}

// Set makes m a member of the project of namespace ns with exactly m's
// scopes, and its admin when m.Admin: it creates the RoleBindings m lacks
// and deletes those of scopes m no longer has. It does not remove an admin
// binding when m.Admin is false; RemoveAdmin does.
func Set(ctx context.Context, c client.Client, ns string, m Member) error {
	if err := m.Validate(); err != nil {
		return err
	}
	current, err := List(ctx, c, ns)
	if err != nil {
		return err
	}
	found := slices.IndexFunc(current, func(x Member) bool { return x.Kind == m.Kind && x.Name == m.Name })
	if found < 0 && len(current) >= MaxMembers {
		return fmt.Errorf("%w: the project has %d members, the most it may", ErrTooMany, len(current))
	}
	for _, s := range Scopes {
		if slices.Contains(m.Scopes, s) {
			if err := create(ctx, c, binding(ns, m.Kind, m.Name, string(s), ClusterRole(s))); err != nil {
				return err
			}
		} else if err := remove(ctx, c, ns, BindingName(m.Kind, m.Name, string(s))); err != nil {
			return err
		}
	}
	if m.Admin {
		return create(ctx, c, binding(ns, m.Kind, m.Name, AdminRole, AdminClusterRole))
	}
	return nil
}

// Remove ends the membership of kind/name in the project of namespace ns:
// every scope, and the admin role. Removing a subject that is no member is
// no error.
func Remove(ctx context.Context, c client.Client, ns, kind, name string) error {
	if err := ValidateSubject(kind, name); err != nil {
		return err
	}
	for _, role := range append([]string{AdminRole}, scopeNames()...) {
		if err := remove(ctx, c, ns, BindingName(kind, name, role)); err != nil {
			return err
		}
	}
	return nil
}

// RemoveAdmin takes the admin role from kind/name, leaving its scopes.
func RemoveAdmin(ctx context.Context, c client.Client, ns, kind, name string) error {
	if err := ValidateSubject(kind, name); err != nil {
		return err
	}
	return remove(ctx, c, ns, BindingName(kind, name, AdminRole))
}

// scopeNames returns the scopes as strings.
func scopeNames() []string {
	out := make([]string, len(Scopes))
	for i, s := range Scopes {
		out[i] = string(s)
	}
	return out
}

// create creates rb, which may exist already as it would be made.
func create(ctx context.Context, c client.Client, rb *rbacv1.RoleBinding) error {
	err := c.Create(ctx, rb)
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating RoleBinding %s/%s: %w", rb.Namespace, rb.Name, err)
	}
	var have rbacv1.RoleBinding
	if err := c.Get(ctx, client.ObjectKeyFromObject(rb), &have); err != nil {
		return fmt.Errorf("reading RoleBinding %s/%s: %w", rb.Namespace, rb.Name, err)
	}
	if role, s, ok := roleOf(&have); !ok || role != rb.Labels[RoleLabelKey] || s.Kind != rb.Subjects[0].Kind || s.Name != rb.Subjects[0].Name {
		return fmt.Errorf("%w: RoleBinding %s/%s exists and is not the member binding it is named for; delete it", ErrConflict, rb.Namespace, rb.Name)
	}
	return nil
}

// remove deletes the member RoleBinding ns/name, which may be gone.
func remove(ctx context.Context, c client.Client, ns, name string) error {
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Delete(ctx, rb); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting RoleBinding %s/%s: %w", ns, name, err)
	}
	return nil
}
