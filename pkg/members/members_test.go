package members

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func newClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := rbacv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

// A RoleBinding that only looks like a member's (the label on another
// role, on two subjects, on a ServiceAccount, under another name) makes
// nobody a member.
func TestListOnlyMemberBindings(t *testing.T) {
	ctx := context.Background()
	forged := func(name, role, clusterRole string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "p", Name: name, Labels: map[string]string{RoleLabelKey: role}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
			Subjects:   subjects,
		}
	}
	user := func(name string) rbacv1.Subject {
		return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: UserKind, Name: name}
	}
	c := newClient(t,
		forged(BindingName(UserKind, "eve", "build"), "build", "cluster-admin", user("eve")),
		forged(BindingName(UserKind, "mallory", "build"), "build", BuildClusterRole, user("mallory"), user("trudy")),
		forged(BindingName("ServiceAccount", "sa", "build"), "build", BuildClusterRole, rbacv1.Subject{Kind: "ServiceAccount", Name: "sa", Namespace: "p"}),
		forged("accelstack-member-build-other", "build", BuildClusterRole, user("oscar")),
		forged(BindingName(UserKind, "peggy", "train"), "train", BuildClusterRole, user("peggy")),
	)
	if err := Set(ctx, c, "p", Member{Kind: UserKind, Name: "alice", Scopes: []Scope{Deploy, Build}}); err != nil {
		t.Fatal(err)
	}
	got, err := List(ctx, c, "p")
	if err != nil {
		t.Fatal(err)
	}
	want := []Member{{Kind: UserKind, Name: "alice", Scopes: []Scope{Build, Deploy}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
}

// Set converges on the member's scopes and admin role; Remove takes all
// and is idempotent.
func TestSetAndRemove(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	g := Member{Kind: GroupKind, Name: "oidc:team a/ml", Scopes: []Scope{Build}}
	if err := ValidateSubject(g.Kind, g.Name); err == nil {
		t.Fatal("a group name with a space passed")
	}
	g.Name = "oidc:team-a/ml"
	for _, step := range []struct {
		m    Member
		want []Member
	}{
		{g, []Member{{Kind: GroupKind, Name: g.Name, Scopes: []Scope{Build}}}},
		{Member{Kind: GroupKind, Name: g.Name, Scopes: []Scope{Deploy, Build}, Admin: true}, []Member{{Kind: GroupKind, Name: g.Name, Scopes: []Scope{Build, Deploy}, Admin: true}}},
		{Member{Kind: GroupKind, Name: g.Name, Scopes: []Scope{Deploy}}, []Member{{Kind: GroupKind, Name: g.Name, Scopes: []Scope{Deploy}, Admin: true}}},
	} {
		if err := Set(ctx, c, "p", step.m); err != nil {
			t.Fatal(err)
		}
		got, err := List(ctx, c, "p")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("after setting %+v (-want +got):\n%s", step.m, diff)
		}
	}
	for range 2 {
		if err := Remove(ctx, c, "p", GroupKind, g.Name); err != nil {
			t.Fatal(err)
		}
	}
	var list rbacv1.RoleBindingList
	if err := c.List(ctx, &list); err != nil || len(list.Items) != 0 {
		t.Errorf("RoleBindings after Remove: %d, %v", len(list.Items), err)
	}
}

func TestSetRefuses(t *testing.T) {
	ctx := context.Background()
	squatter := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "p", Name: BindingName(UserKind, "alice", "build")},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: UserKind, Name: "alice"}},
	}
	c := newClient(t, squatter)
	if err := Set(ctx, c, "p", Member{Kind: UserKind, Name: "alice", Scopes: []Scope{Build}}); !errors.Is(err, ErrConflict) {
		t.Errorf("a RoleBinding in the way: %v, want ErrConflict", err)
	}
	for _, m := range []Member{
		{Kind: "ServiceAccount", Name: "x", Scopes: []Scope{Build}},
		{Kind: UserKind, Name: "", Scopes: []Scope{Build}},
		{Kind: UserKind, Name: strings.Repeat("a", 254), Scopes: []Scope{Build}},
		{Kind: UserKind, Name: "a\x00b", Scopes: []Scope{Build}},
		{Kind: UserKind, Name: "bob", Scopes: nil},
		{Kind: UserKind, Name: "bob", Scopes: []Scope{"admin"}},
	} {
		if err := Set(ctx, c, "p", m); !errors.Is(err, ErrInvalid) {
			t.Errorf("Set(%+v): %v, want ErrInvalid", m, err)
		}
	}

	var many []client.Object
	for i := range MaxMembers {
		many = append(many, binding("p", UserKind, fmt.Sprintf("u%d", i), string(Build), BuildClusterRole))
	}
	full := newClient(t, many...)
	if err := Set(ctx, full, "p", Member{Kind: UserKind, Name: "one-more", Scopes: []Scope{Build}}); !errors.Is(err, ErrTooMany) {
		t.Errorf("a member over %d: %v, want ErrTooMany", MaxMembers, err)
	}
	if err := Set(ctx, full, "p", Member{Kind: UserKind, Name: "u0", Scopes: []Scope{Deploy}}); err != nil {
		t.Errorf("changing a member of a full project: %v", err)
	}
}
