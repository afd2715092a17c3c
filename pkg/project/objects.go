package project

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// labels are the labels of everything the controller creates for p.
func projectLabels(p *tensorstackv1beta1.Project) map[string]string {
	return map[string]string{ProjectLabelKey: p.Name}
}

// EgressExcept are the address ranges the default NetworkPolicy keeps the
// project's pods from reaching outside the namespaces it admits: the
// link-local ranges, where clouds serve instance metadata and credentials
// (169.254.169.254), and AWS's IPv6 metadata address.
var EgressExcept = []string{"169.254.0.0/16", "fe80::/10", "fd00:ec2::254/128"}

// defaultPolicy is the NetworkPolicy of a Project that sets none, or sets
// useDefaultTemplate: every pod of the project admits ingress only from
// the pods of the project and of namespaces, and sends only to them, to
// DNS (port 53 anywhere, node-local caches included) and to addresses
// outside the cluster's link-local ranges (EgressExcept: instance
// metadata), so that datasets, packages and images still download.
func defaultPolicy(project string, namespaces []string) networkingv1.NetworkPolicySpec {
	admitted := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn,
		Values: append(append([]string{}, namespaces...), project),
	}}}
	udp, tcp, dns := corev1.ProtocolUDP, corev1.ProtocolTCP, intstr.FromInt32(53)
	return networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		Ingress: []networkingv1.NetworkPolicyIngressRule{{
			From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: admitted}},
		}},
		Egress: []networkingv1.NetworkPolicyEgressRule{
			{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: &dns}, {Protocol: &tcp, Port: &dns}}},
			{To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: admitted.DeepCopy()}}},
			{To: []networkingv1.NetworkPolicyPeer{
				{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: exceptIn("0.0.0.0/0")}},
				{IPBlock: &networkingv1.IPBlock{CIDR: "::/0", Except: exceptIn("::/0")}},
			}},
		},
	}
}

// exceptIn returns the ranges of EgressExcept of cidr's family.
func exceptIn(cidr string) []string {
	v6 := strings.Contains(cidr, ":")
	var out []string
	for _, e := range EgressExcept {
		if strings.Contains(e, ":") == v6 {
			out = append(out, e)
		}
	}
	return out
}

// policySpec returns the NetworkPolicy spec p asks for, or nil for none:
// the default when p sets no spec.networkPolicy or sets useDefaultTemplate,
// its template when it sets one, none when it sets neither.
func policySpec(p *tensorstackv1beta1.Project, defaults []string) *networkingv1.NetworkPolicySpec {
	np := p.Spec.NetworkPolicy
	switch {
	case np == nil || np.UseDefaultTemplate:
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
