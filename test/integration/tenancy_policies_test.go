package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/project"
	"github.com/accelstack/accelstack/pkg/satoken"
	"github.com/accelstack/accelstack/test/harness"
)

// controllersUser is the user name of the controllers' ServiceAccount.
const controllersUser = "system:serviceaccount:accelstack-system:controllers"

// TestTenancyPolicies applies the controllers' RBAC, the project roles and
// deploy/controllers/tenancy-policies.yaml to a real API server and checks
// that the controllers' token reaches no further than tenant namespaces:
// nothing written in kube-system, RoleBindings only in Project namespaces,
// only Project namespaces created or deleted, no impersonation and no token
// requests outside the Project namespaces that bind them; and that a
// ServiceAccountToken is created only in a Project namespace, by someone
// holding the rights its token gets, and its token cannot create another.
func TestTenancyPolicies(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	cp.ApplyDeploy(t, "namespace.yaml", "rbac/role.yaml", "controllers/deployment.yaml", "controllers/project-roles.yaml", "controllers/tenancy-policies.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := cp.Client
	projectNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{project.ProjectLabelKey: "team-a"}}}
	plainNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}
	for _, o := range []client.Object{projectNS, plainNS} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	sa := saClient(t, cp.Config, "controllers", "")

	// The API server loads new policies asynchronously: wait for the first
	// denial.
	pod := func(ns string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "p-"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
	}
	var denied error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, denied = sa.CoreV1().Pods("kube-system").Create(ctx, pod("kube-system"), metav1.CreateOptions{})
		return deniedByPolicy(denied), nil
	})
	if err != nil {
		t.Fatalf("create of a pod in kube-system as the controllers = %v, want denied by the policy", denied)
	}
	if !strings.Contains(denied.Error(), "kube-system") {
		t.Errorf("denial %q does not name the namespace", denied)
	}
	if _, err := sa.CoreV1().Pods("plain").Create(ctx, pod("plain"), metav1.CreateOptions{}); err != nil {
		t.Errorf("create of a job's pod in a tenant namespace as the controllers: %v", err)
	}

	binding := func(ns string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "member"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: satoken.MemberClusterRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "default"}},
		}
	}
	for _, ns := range []string{"plain", "kube-system"} {
		if _, err := sa.RbacV1().RoleBindings(ns).Create(ctx, binding(ns), metav1.CreateOptions{}); !deniedByPolicy(err) {
			t.Errorf("create of a RoleBinding in %s as the controllers = %v, want denied by the policy", ns, err)
		}
	}
	if _, err := sa.RbacV1().RoleBindings("team-a").Create(ctx, binding("team-a"), metav1.CreateOptions{}); err != nil {
		t.Errorf("create of a RoleBinding in a Project namespace as the controllers: %v", err)
	}

	namespaces := sa.CoreV1().Namespaces()
	if _, err := namespaces.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled"}}, metav1.CreateOptions{}); !deniedByPolicy(err) {
		t.Errorf("create of an unlabelled namespace as the controllers = %v, want denied by the policy", err)
	}
	if _, err := namespaces.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b", Labels: map[string]string{project.ProjectLabelKey: "team-b"}}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("create of a Project namespace as the controllers: %v", err)
	}
	if err := namespaces.Delete(ctx, "plain", metav1.DeleteOptions{}); !deniedByPolicy(err) {
		t.Errorf("delete of an unlabelled namespace as the controllers = %v, want denied by the policy", err)
	}
	unlabel := []byte(`{"metadata":{"labels":{"` + project.ProjectLabelKey + `":null}}}`)
	if _, err := namespaces.Patch(ctx, "team-a", types.MergePatchType, unlabel, metav1.PatchOptions{}); !deniedByPolicy(err) && !apierrors.IsForbidden(err) {
		t.Errorf("removing the project label of team-a as the controllers = %v, want refused", err)
	}
	if err := namespaces.Delete(ctx, "team-b", metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete of a Project namespace as the controllers: %v", err)
	}

	// Impersonation and token requests: nowhere by the cluster-wide role,
	// only where the Project controller bound accelstack-controllers-project.
	for _, ns := range []string{"plain", "team-a", "kube-system"} {
		for _, verb := range []struct{ verb, sub string }{{"impersonate", ""}, {"create", "token"}} {
			if allowed(ctx, t, cp.Config, controllersUser, ns, verb.verb, "serviceaccounts", verb.sub) {
				t.Errorf("the controllers may %s serviceaccounts %s in %s without a Project binding", verb.verb, verb.sub, ns)
			}
		}
	}
	rights := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: project.ControllersRoleBindingName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: project.ControllersClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "accelstack-system", Name: "controllers"}},
	}
	if _, err := sa.RbacV1().RoleBindings("team-a").Create(ctx, rights, metav1.CreateOptions{}); err != nil {
		t.Fatalf("binding the controllers' project rights as the controllers: %v", err)
	}
	rights.Namespace = "plain"
	if _, err := sa.RbacV1().RoleBindings("plain").Create(ctx, rights, metav1.CreateOptions{}); !deniedByPolicy(err) {
		t.Errorf("binding the controllers' project rights in a plain namespace = %v, want denied by the policy", err)
	}
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		return allowed(ctx, t, cp.Config, controllersUser, "team-a", "impersonate", "serviceaccounts", "") &&
			allowed(ctx, t, cp.Config, controllersUser, "team-a", "create", "serviceaccounts", "token"), nil
	})
	if err != nil {
		t.Errorf("the controllers may not impersonate or request tokens in team-a once bound there")
	}
	if allowed(ctx, t, cp.Config, controllersUser, "plain", "impersonate", "serviceaccounts", "") {
		t.Errorf("the binding in team-a lets the controllers impersonate in plain")
	}

	testServiceAccountTokenPolicy(ctx, t, cp)
}

// testServiceAccountTokenPolicy checks accelstack-serviceaccounttokens and
// that a token's rights do not include issuing tokens.
func testServiceAccountTokenPolicy(ctx context.Context, t *testing.T, cp *harness.ControlPlane) {
	t.Helper()
	admin := cp.Client
	sat := func(ns, name string) *tensorstackv1beta1.ServiceAccountToken {
		return &tensorstackv1beta1.ServiceAccountToken{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       tensorstackv1beta1.ServiceAccountTokenSpec{Duration: "1h"},
		}
	}
	var denied error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		denied = admin.Create(ctx, sat("plain", "ci"))
		return deniedByPolicy(denied), nil
	})
	if err != nil {
		t.Fatalf("create of a ServiceAccountToken in a plain namespace = %v, want denied by the policy", denied)
	}
	if !strings.Contains(denied.Error(), "Project namespaces") {
		t.Errorf("denial %q does not say where tokens are issued", denied)
	}
	if err := admin.Create(ctx, sat("team-a", "ci")); err != nil {
		t.Errorf("create of a ServiceAccountToken in a Project namespace as an admin: %v", err)
	}

	// issuer may create ServiceAccountTokens in team-a and nothing else.
	issuerRole := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "token-issuer"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{tensorstackv1beta1.GroupVersion.Group}, Resources: []string{"serviceaccounttokens"}, Verbs: []string{"create"}}},
	}
	bind := func(name string, ref rbacv1.RoleRef, user string) {
		t.Helper()
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
			RoleRef:    ref,
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}
		if err := admin.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.Create(ctx, issuerRole); err != nil {
		t.Fatal(err)
	}
	bind("issuer", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "token-issuer"}, "issuer")
	bind("member-issuer", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "token-issuer"}, "member")
	bind("member-rights", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: satoken.MemberClusterRole}, "member")
	as := func(user string) client.Client {
		cfg := rest.CopyConfig(cp.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		c, err := client.New(cfg, client.Options{Scheme: cp.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		denied = as("issuer").Create(ctx, sat("team-a", "escalate"))
		return deniedByPolicy(denied), nil
	})
	if err != nil {
		t.Errorf("create of a ServiceAccountToken by a user holding only that right = %v, want denied by the policy", denied)
	} else if !strings.Contains(denied.Error(), "needs the rights its token gets") {
		t.Errorf("denial %q does not say what is missing", denied)
	}
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		return as("member").Create(ctx, sat("team-a", "by-member")) == nil, nil
	})
	if err != nil {
		t.Errorf("create of a ServiceAccountToken by a project member: %v", as("member").Create(ctx, sat("team-a", "by-member-2")))
	}

	// A token has the member role in its namespace, and that role holds no
	// right on ServiceAccountTokens: a token cannot issue another.
	bind("token", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: satoken.MemberClusterRole}, "system:serviceaccount:team-a:ci")
	tokenUser := "system:serviceaccount:team-a:ci"
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		return allowed(ctx, t, cp.Config, tokenUser, "team-a", "create", "pods", ""), nil
	})
	if err != nil {
		t.Fatalf("the token's member binding does not let it create pods")
	}
	for _, verb := range []string{"create", "update", "patch"} {
		if allowedIn(ctx, t, cp.Config, tokenUser, "team-a", verb, tensorstackv1beta1.GroupVersion.Group, "serviceaccounttokens", "") {
			t.Errorf("a ServiceAccountToken's token may %s serviceaccounttokens", verb)
		}
	}
}

// allowed asks the API server whether user may do verb on the core
// resource (and subresource) in ns.
func allowed(ctx context.Context, t *testing.T, cfg *rest.Config, user, ns, verb, resource, sub string) bool {
	t.Helper()
	return allowedIn(ctx, t, cfg, user, ns, verb, "", resource, sub)
}

// allowedIn asks the API server, by a SubjectAccessReview, whether user may
// do verb on group's resource (and subresource) in ns.
func allowedIn(ctx context.Context, t *testing.T, cfg *rest.Config, user, ns, verb, group, resource, sub string) bool {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	groups := []string{"system:authenticated"}
	if strings.HasPrefix(user, "system:serviceaccount:") {
		groups = append(groups, "system:serviceaccounts", "system:serviceaccounts:"+strings.Split(user, ":")[2])
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   user,
		Groups: groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: sub,
		},
	}}
	if err := c.Create(ctx, sar); err != nil {
		t.Fatal(err)
	}
	return sar.Status.Allowed
}
