package project

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// makeProject returns a Project name with no spec.
func makeProject(name string) *tensorstackv1beta1.Project {
	return &tensorstackv1beta1.Project{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid")}}
}

func TestPolicySpec(t *testing.T) {
	tmpl := networkingv1.NetworkPolicySpec{
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
		Egress:      []networkingv1.NetworkPolicyEgressRule{{}},
	}
	admit := func(namespaces ...string) *networkingv1.NetworkPolicySpec {
		sel := func() *metav1.LabelSelector {
			return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: namespaces,
			}}}
		}
		dns := intstr.FromInt32(53)
		return &networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel()}}}},
			Egress: []networkingv1.NetworkPolicyEgressRule{
				{Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolUDP), Port: &dns}, {Protocol: ptr.To(corev1.ProtocolTCP), Port: &dns}}},
				{To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel()}}},
				{To: []networkingv1.NetworkPolicyPeer{
					{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{"169.254.0.0/16"}}},
					{IPBlock: &networkingv1.IPBlock{CIDR: "::/0", Except: []string{"fe80::/10", "fd00:ec2::254/128"}}},
				}},
			},
		}
	}
	for _, tc := range []struct {
		name string
		np   *tensorstackv1beta1.ProjectNetworkPolicy
		want *networkingv1.NetworkPolicySpec
	}{
		// Unset is the default: a Project is isolated unless it opts out.
		{name: "unset", np: nil, want: admit("t9k-system", "accelstack-system", "demo")},
		{name: "opted out", np: &tensorstackv1beta1.ProjectNetworkPolicy{}, want: nil},
		{name: "default", np: &tensorstackv1beta1.ProjectNetworkPolicy{UseDefaultTemplate: true},
			want: admit("t9k-system", "accelstack-system", "demo")},
		{name: "template", np: &tensorstackv1beta1.ProjectNetworkPolicy{Template: &tensorstackv1beta1.ProjectNetworkPolicyTemplate{Spec: tmpl}},
			want: &tmpl},
		{name: "default before template", np: &tensorstackv1beta1.ProjectNetworkPolicy{UseDefaultTemplate: true, Template: &tensorstackv1beta1.ProjectNetworkPolicyTemplate{Spec: tmpl}},
			want: admit("t9k-system", "accelstack-system", "demo")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := makeProject("demo")
			p.Spec.NetworkPolicy = tc.np
			got := policySpec(p, DefaultPolicyNamespaces)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("policySpec (-want +got):\n%s", diff)
			}
			if got != nil && tc.np != nil && tc.np.Template != nil && !tc.np.UseDefaultTemplate && got == &tc.np.Template.Spec {
				t.Error("policySpec returned the template itself, not a copy")
			}
		})
	}
}

// TestDefaultPolicyKeepsNamespaces: the project's name is added to a copy
// of the admitted namespaces, never to the caller's slice.
func TestDefaultPolicyKeepsNamespaces(t *testing.T) {
	namespaces := make([]string, 1, 4)
	namespaces[0] = "t9k-system"
	a := defaultPolicy("a", namespaces)
	b := defaultPolicy("b", namespaces)
	if diff := cmp.Diff([]string{"t9k-system"}, namespaces); diff != "" {
		t.Errorf("namespaces changed (-want +got):\n%s", diff)
	}
	values := func(s networkingv1.NetworkPolicySpec) []string {
		return s.Ingress[0].From[0].NamespaceSelector.MatchExpressions[0].Values
	}
	if diff := cmp.Diff([]string{"t9k-system", "a"}, values(a)); diff != "" {
		t.Errorf("policy of a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"t9k-system", "b"}, values(b)); diff != "" {
		t.Errorf("policy of b (-want +got):\n%s", diff)
	}
}

func TestRoleBinding(t *testing.T) {
	rb := roleBinding(makeProject("demo"))
	want := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: ServiceAccountName, Labels: map[string]string{ProjectLabelKey: "demo"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ServiceAccountClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "demo", Name: ServiceAccountName}},
	}
	if diff := cmp.Diff(want, rb); diff != "" {
		t.Errorf("roleBinding (-want +got):\n%s", diff)
	}
}

func TestNamespaceProject(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   []reconcile.Request
	}{
		{name: "marked", labels: map[string]string{ProjectLabelKey: "demo"}, want: []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "demo"}}}},
		{name: "unmarked", labels: map[string]string{"other": "x"}, want: nil},
		{name: "empty mark", labels: map[string]string{ProjectLabelKey: ""}, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: tc.labels}}
			if diff := cmp.Diff(tc.want, namespaceProject(context.Background(), ns)); diff != "" {
				t.Errorf("namespaceProject (-want +got):\n%s", diff)
			}
		})
	}
}
