package project

import (
	"context"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// The controllers' own rights in a Project namespace.
const (
	// ControllersClusterRole holds what the controllers may do only in
	// Project namespaces: impersonate the namespace's ServiceAccounts
	// (Resource workflow steps) and request their tokens
	// (ServiceAccountTokens); deploy/controllers/project-roles.yaml.
	ControllersClusterRole = "accelstack-controllers-project"
	// ControllersRoleBindingName is the RoleBinding in each Project
	// namespace that binds ControllersClusterRole to the controllers.
	ControllersRoleBindingName = "accelstack-controllers"
	// GatewayClusterRole holds what the gateway may do only in Project
	// namespaces: read the workloads' access Secrets and serving
	// Services, so that it reaches the workloads of projects only.
	GatewayClusterRole = "accelstack-gateway-project"
	// GatewayRoleBindingName is the RoleBinding in each Project namespace
	// that binds GatewayClusterRole to the gateway.
	GatewayRoleBindingName = "accelstack-gateway"
)

// serviceAccountPrefix starts the user name of a ServiceAccount's token.
const serviceAccountPrefix = "system:serviceaccount:"

// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=accelstack-controllers-project;accelstack-gateway-project

// Self returns the RBAC subject the client c authenticates as, asked of the
// API server (a SelfSubjectReview): the ServiceAccount of a token, or the
// user.
func Self(ctx context.Context, c client.Client) (rbacv1.Subject, error) {
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return rbacv1.Subject{}, fmt.Errorf("asking the API server who the controllers are: %w", err)
	}
	return subjectOf(review.Status.UserInfo.Username)
}

// subjectOf returns the RBAC subject of the user name user.
func subjectOf(user string) (rbacv1.Subject, error) {
	if user == "" {
		return rbacv1.Subject{}, fmt.Errorf("the API server names no user for the controllers' credentials")
	}
	rest, ok := strings.CutPrefix(user, serviceAccountPrefix)
	if !ok {
		return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}, nil
	}
	ns, name, ok := strings.Cut(rest, ":")
	if !ok || ns == "" || name == "" {
		return rbacv1.Subject{}, fmt.Errorf("malformed ServiceAccount user name %q", user)
	}
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}, nil
}

// systemRights binds ControllersClusterRole to the controllers and
// GatewayClusterRole to the gateway in the project's namespace, so that
// what they may do there stays inside Project namespaces. A nil subject
// is bound nothing.
func (r *Reconciler) systemRights(ctx context.Context, p *tensorstackv1beta1.Project) error {
	for _, b := range []struct {
		name, role string
		subject    *rbacv1.Subject
	}{
		{ControllersRoleBindingName, ControllersClusterRole, r.controllers},
		{GatewayRoleBindingName, GatewayClusterRole, r.gateway},
	} {
		if b.subject == nil {
			continue
		}
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: p.Name, Name: b.name}}
		if _, err := r.createOrUpdate(ctx, p, rb, func() {
			if rb.CreationTimestamp.IsZero() {
				rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: b.role}
			}
			rb.Subjects = []rbacv1.Subject{*b.subject}
		}); err != nil {
			return fmt.Errorf("applying RoleBinding %s: %w", b.name, err)
		}
	}
	return nil
}
