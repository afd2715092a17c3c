package project

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// labels are the labels of everything the controller creates for p.
func projectLabels(p *tensorstackv1beta1.Project) map[string]string {
	return map[string]string{ProjectLabelKey: p.Name}
}

// defaultPolicy is the NetworkPolicy of useDefaultTemplate: every pod of
// the project admits ingress only from the pods of the project and of
// namespaces.
func defaultPolicy(project string, namespaces []string) networkingv1.NetworkPolicySpec {
	return networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		Ingress: []networkingv1.NetworkPolicyIngressRule{{
			From: []networkingv1.NetworkPolicyPeer{{
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn,
					Values: append(append([]string{}, namespaces...), project),
				}}},
			}},
		}},
	}
}

// policySpec returns the NetworkPolicy spec p asks for, or nil for none.
func policySpec(p *tensorstackv1beta1.Project, defaults []string) *networkingv1.NetworkPolicySpec {
	np := p.Spec.NetworkPolicy
	switch {
	case np == nil:
		return nil
	case np.UseDefaultTemplate:
		s := defaultPolicy(p.Name, defaults)
		return &s
	case np.Template != nil:
		return np.Template.Spec.DeepCopy()
	}
	return nil
}

// roleBinding binds managed-project-sa to its ClusterRole in the project.
func roleBinding(p *tensorstackv1beta1.Project) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Name, Name: ServiceAccountName, Labels: projectLabels(p)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ServiceAccountClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: p.Name, Name: ServiceAccountName}},
	}
}
