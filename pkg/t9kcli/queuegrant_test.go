package t9kcli

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func user(n string) rbacv1.Subject {
	return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: n}
}

func group(n string) rbacv1.Subject {
	return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: n}
}

func TestGrantAndRevokeQueue(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	added, err := grantQueue(ctx, cs, "a100", []rbacv1.Subject{user("alice"), group("vision")})
	if err != nil || len(added) != 2 {
		t.Fatalf("first grant: added %v, %v", added, err)
	}
	role, err := cs.RbacV1().ClusterRoles().Get(ctx, grantName("a100"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(role.Rules) != 1 || !grantsUse(role.Rules[0], "a100") || grantsUse(role.Rules[0], "t4") {
		t.Errorf("the grant's rules %+v: want use on queues/a100 only", role.Rules)
	}
	// Granting again adds only who is new.
	if added, err := grantQueue(ctx, cs, "a100", []rbacv1.Subject{user("alice"), user("bob")}); err != nil || fmt.Sprint(added) != fmt.Sprint([]rbacv1.Subject{user("bob")}) {
		t.Errorf("second grant: added %v, %v; want bob only", added, err)
	}
	grants, err := queueGrants(ctx, cs, "a100")
	if err != nil || len(grants) != 3 {
		t.Fatalf("grants %v, %v; want alice, bob and vision", grants, err)
	}
	if other, _ := queueGrants(ctx, cs, "t4"); len(other) != 0 {
		t.Errorf("queue t4's grants: %v, want none", other)
	}

	if removed, err := revokeQueue(ctx, cs, "a100", []rbacv1.Subject{user("alice"), user("carol")}); err != nil || fmt.Sprint(removed) != fmt.Sprint([]rbacv1.Subject{user("alice")}) {
		t.Errorf("revoke: removed %v, %v; want alice", removed, err)
	}
	if _, err := revokeQueue(ctx, cs, "a100", []rbacv1.Subject{user("bob"), group("vision")}); err != nil {
		t.Fatal(err)
	}
	// The last revoke leaves nothing behind.
	if _, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, grantName("a100"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the binding after the last revoke: %v", err)
	}
	if _, err := cs.RbacV1().ClusterRoles().Get(ctx, grantName("a100"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the role after the last revoke: %v", err)
	}
}

// A ClusterRole of the grant's name that is not t9k's is not taken over.
func TestGrantQueueRefusesAForeignRole(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: grantName("a100")}})
	if _, err := grantQueue(ctx, cs, "a100", []rbacv1.Subject{user("alice")}); err == nil {
		t.Error("a grant over a foreign ClusterRole was made")
	}
	// Nor does a revoke, with no binding of t9k's, delete it.
	if _, err := revokeQueue(ctx, cs, "a100", []rbacv1.Subject{user("alice")}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoles().Get(ctx, grantName("a100"), metav1.GetOptions{}); err != nil {
		t.Errorf("the foreign ClusterRole after a revoke: %v", err)
	}
}

// Grants written as YAML count, wildcards as RBAC reads them.
func TestQueueGrantsReadsEveryBinding(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "admin-ish"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "queue-a100"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{queueGroup}, Resources: []string{queueResource}, ResourceNames: []string{"a100"}, Verbs: []string{useVerb}}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "queue-reader"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{queueGroup}, Resources: []string{queueResource}, Verbs: []string{"get", "list"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "ops"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "admin-ish"}, Subjects: []rbacv1.Subject{group("ops")}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "queue-a100"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "queue-a100"}, Subjects: []rbacv1.Subject{user("dana")}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "readers"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "queue-reader"}, Subjects: []rbacv1.Subject{user("erin")}},
	)
	grants, err := queueGrants(ctx, cs, "a100")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(grants); got != "[{{Group rbac.authorization.k8s.io ops } ops} {{User rbac.authorization.k8s.io dana } queue-a100}]" {
		t.Errorf("grants of a100: %s", got)
	}
}
