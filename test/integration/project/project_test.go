package project

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/project"
	"github.com/accelstack/accelstack/test/testutil"
)

// TestProject runs every test against one control plane.
func TestProject(t *testing.T) {
	e := startEnv(t)
	t.Run("group", func(t *testing.T) {
		for name, test := range map[string]func(*testing.T){
			"Objects":                e.testObjects,
			"PolicyTemplate":         e.testPolicyTemplate,
			"QuotaProfile":           e.testQuotaProfile,
			"Refused":                e.testRefused,
			"DeleteKeepsNamespace":   e.testDeleteKeepsNamespace,
			"DeleteConfirmed":        e.testDeleteConfirmed,
			"ForeignMarkedNamespace": e.testForeignNamespace,
			"PodSecurity":            e.testPodSecurity,
			"PodSecurityProfile":     e.testPodSecurityProfile,
			"PlatformPodsBaseline":   e.testPlatformPodsBaseline,
			"DefaultQuotaProfile":    e.testDefaultQuotaProfile,
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				test(t)
			})
		}
	})
	for _, line := range strings.Split(e.controllers.Log(), "\n") {
		if strings.Contains(line, "Reconciler error") && strings.Contains(line, `"project"`) {
			t.Errorf("the Project controller failed: %s", line)
		}
	}
}

// gpuQuota is a quota of GPUs, CPUs and pods.
func gpuQuota(gpus string) corev1.ResourceQuotaSpec {
	return corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		"requests.nvidia.com/gpu": resource.MustParse(gpus),
		corev1.ResourceCPU:        resource.MustParse("200"),
		corev1.ResourcePods:       resource.MustParse("1k"),
	}}
}

// testObjects: a Project with a quota template, the default network policy
// and a default scheduler gets its namespace, ResourceQuota, NetworkPolicy,
// managed-project-sa and its RoleBinding, and Ready.
func (e *env) testObjects(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	name := name("objects")
	p := newProject(name)
	p.Spec = tensorstackv1beta1.ProjectSpec{
		ResourceQuota:    &tensorstackv1beta1.ProjectResourceQuota{Template: &tensorstackv1beta1.ProjectResourceQuotaTemplate{Spec: gpuQuota("2")}},
		NetworkPolicy:    &tensorstackv1beta1.ProjectNetworkPolicy{UseDefaultTemplate: true},
		DefaultScheduler: &tensorstackv1beta1.SchedulePolicy{T9kScheduler: &tensorstackv1beta1.T9kScheduler{Queue: "default"}},
	}
	testutil.MustCreate(ctx, t, e.c, p)
	p = e.waitReady(ctx, t, name, corev1.ConditionTrue, project.ReasonReady)
	if p.Status.ResourceQuota == nil || p.Status.ResourceQuota.Name != project.ResourceQuotaName {
		t.Errorf("status.resourceQuota = %+v, want name %s", p.Status.ResourceQuota, project.ResourceQuotaName)
	}
	if p.Spec.DefaultScheduler == nil || p.Spec.DefaultScheduler.T9kScheduler.Queue != "default" {
		t.Errorf("spec.defaultScheduler not kept: %+v", p.Spec.DefaultScheduler)
	}

	ns := &corev1.Namespace{}
	e.waitFor(ctx, t, "", name, ns, nil)
	if got := ns.Labels[project.ProjectLabelKey]; got != name {
		t.Errorf("namespace label %s = %q, want %q", project.ProjectLabelKey, got, name)
	}
	rq := &corev1.ResourceQuota{}
	e.waitFor(ctx, t, name, project.ResourceQuotaName, rq, nil)
	if !equality.Semantic.DeepEqual(rq.Spec, gpuQuota("2")) {
		t.Errorf("ResourceQuota spec = %+v, want %+v", rq.Spec, gpuQuota("2"))
	}
	np := &networkingv1.NetworkPolicy{}
	e.waitFor(ctx, t, name, project.NetworkPolicyName, np, nil)
	peers := np.Spec.Ingress[0].From
	if len(np.Spec.Ingress) != 1 || len(peers) != 1 || peers[0].NamespaceSelector == nil {
		t.Fatalf("default NetworkPolicy ingress = %+v", np.Spec.Ingress)
	}
	if diff := cmp.Diff([]string{"t9k-system", "accelstack-system", name}, peers[0].NamespaceSelector.MatchExpressions[0].Values); diff != "" {
		t.Errorf("default NetworkPolicy admits namespaces (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}, np.Spec.PolicyTypes); diff != "" {
		t.Errorf("policyTypes (-want +got):\n%s", diff)
	}
	checkDefaultEgress(t, np, name)
	e.waitFor(ctx, t, name, project.ServiceAccountName, &corev1.ServiceAccount{}, nil)
	rb := &rbacv1.RoleBinding{}
	e.waitFor(ctx, t, name, project.ServiceAccountName, rb, nil)
	if rb.RoleRef.Name != project.ServiceAccountClusterRole || len(rb.Subjects) != 1 || rb.Subjects[0].Name != project.ServiceAccountName || rb.Subjects[0].Namespace != name {
		t.Errorf("RoleBinding = %+v %+v", rb.RoleRef, rb.Subjects)
	}
	gw := &rbacv1.RoleBinding{}
	e.waitFor(ctx, t, name, project.GatewayRoleBindingName, gw, nil)
	if gw.RoleRef.Name != project.GatewayClusterRole || len(gw.Subjects) != 1 || gw.Subjects[0].Name != "gateway" || gw.Subjects[0].Namespace != "accelstack-system" {
		t.Errorf("the gateway's RoleBinding = %+v %+v", gw.RoleRef, gw.Subjects)
	}

	// Removing the quota from the spec removes the ResourceQuota.
	e.updateProject(ctx, t, name, func(p *tensorstackv1beta1.Project) { p.Spec.ResourceQuota = nil })
	e.waitGone(ctx, t, name, project.ResourceQuotaName, &corev1.ResourceQuota{})
}

// testPolicyTemplate: a NetworkPolicy template is applied as written, and
// dropping spec.networkPolicy removes the policy.
func (e *env) testPolicyTemplate(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	name := name("policy")
	spec := networkingv1.NetworkPolicySpec{
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "t9k-system"}},
		}}}},
		Egress: []networkingv1.NetworkPolicyEgressRule{{
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(443))}},
		}},
	}
	p := newProject(name)
	p.Spec.NetworkPolicy = &tensorstackv1beta1.ProjectNetworkPolicy{Template: &tensorstackv1beta1.ProjectNetworkPolicyTemplate{Spec: spec}}
	testutil.MustCreate(ctx, t, e.c, p)
	e.waitReady(ctx, t, name, corev1.ConditionTrue, project.ReasonReady)
	np := &networkingv1.NetworkPolicy{}
	e.waitFor(ctx, t, name, project.NetworkPolicyName, np, nil)
	if !equality.Semantic.DeepEqual(np.Spec, spec) {
		t.Errorf("NetworkPolicy spec = %+v, want %+v", np.Spec, spec)
	}
	// Unset is the default policy; useDefaultTemplate false without a
	// template opts out.
	e.updateProject(ctx, t, name, func(p *tensorstackv1beta1.Project) { p.Spec.NetworkPolicy = nil })
	e.waitFor(ctx, t, name, project.NetworkPolicyName, np, func() bool { return len(np.Spec.Egress) == 3 })
	checkDefaultEgress(t, np, name)
	e.updateProject(ctx, t, name, func(p *tensorstackv1beta1.Project) {
		p.Spec.NetworkPolicy = &tensorstackv1beta1.ProjectNetworkPolicy{}
	})
	e.waitGone(ctx, t, name, project.NetworkPolicyName, &networkingv1.NetworkPolicy{})
	if p := e.project(ctx, t, name); p.Spec.NetworkPolicy == nil {
		t.Error("spec.networkPolicy: {} read back as unset: the opt-out does not survive the API server")
	}
}

// checkDefaultEgress checks the egress of the default policy of the
// project ns: DNS anywhere, the admitted namespaces, and every address but
// the link-local ranges (cloud instance metadata). Whether it is enforced
// depends on the cluster's network plugin, which the control plane here
// lacks: the test checks the object the API server stores.
func checkDefaultEgress(t *testing.T, np *networkingv1.NetworkPolicy, ns string) {
	t.Helper()
	eg := np.Spec.Egress
	if len(eg) != 3 {
		t.Fatalf("egress %+v, want DNS, the admitted namespaces and the outside", eg)
	}
	if p := eg[0].Ports; len(eg[0].To) != 0 || len(p) != 2 || p[0].Port.IntValue() != 53 || *p[0].Protocol != corev1.ProtocolUDP || *p[1].Protocol != corev1.ProtocolTCP {
		t.Errorf("DNS rule %+v", eg[0])
	}
	if to := eg[1].To; len(to) != 1 || to[0].NamespaceSelector == nil ||
		!cmp.Equal(to[0].NamespaceSelector.MatchExpressions[0].Values, []string{"t9k-system", "accelstack-system", ns}) {
		t.Errorf("namespaces rule %+v", eg[1])
	}
	if to := eg[2].To; len(to) != 2 || to[0].IPBlock == nil || to[0].IPBlock.CIDR != "0.0.0.0/0" ||
		!cmp.Equal(to[0].IPBlock.Except, []string{"169.254.0.0/16"}) || to[1].IPBlock == nil || to[1].IPBlock.CIDR != "::/0" {
		t.Errorf("outside rule %+v", eg[2])
	}
}

// testQuotaProfile: Projects naming a QuotaProfile get its spec, a change to
// it reaches both, and a missing profile is reported while the quota
// stays as it was.
func (e *env) testQuotaProfile(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	qp := &tensorstackv1beta1.QuotaProfile{ObjectMeta: metav1.ObjectMeta{Name: name("profile")}, Spec: gpuQuota("4")}
	testutil.MustCreate(ctx, t, e.c, qp)
	a, b := name("qp-a"), name("qp-b")
	for _, n := range []string{a, b} {
		p := newProject(n)
		p.Spec.QuotaProfile = qp.Name
		testutil.MustCreate(ctx, t, e.c, p)
	}
	for _, n := range []string{a, b} {
		e.waitReady(ctx, t, n, corev1.ConditionTrue, project.ReasonReady)
		rq := &corev1.ResourceQuota{}
		e.waitFor(ctx, t, n, project.ResourceQuotaName, rq, func() bool { return equality.Semantic.DeepEqual(rq.Spec, gpuQuota("4")) })
	}

	qp.Spec = gpuQuota("8")
	if err := e.c.Update(ctx, qp); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{a, b} {
		rq := &corev1.ResourceQuota{}
		e.waitFor(ctx, t, n, project.ResourceQuotaName, rq, func() bool { return equality.Semantic.DeepEqual(rq.Spec, gpuQuota("8")) })
	}

	// A Project naming a profile that is not there is not Ready, and keeps
	// the quota it had.
	missing := name("missing")
	e.updateProject(ctx, t, a, func(p *tensorstackv1beta1.Project) { p.Spec.QuotaProfile = missing })
	p := e.waitReady(ctx, t, a, corev1.ConditionFalse, project.ReasonQuotaProfileNotFound)
	if msg := ready(p).Message; !strings.Contains(msg, "spec.quotaProfile") || !strings.Contains(msg, missing) {
		t.Errorf("Ready message %q does not name spec.quotaProfile and %s", msg, missing)
	}
	rq := &corev1.ResourceQuota{}
	e.waitFor(ctx, t, a, project.ResourceQuotaName, rq, nil)
	if !equality.Semantic.DeepEqual(rq.Spec, gpuQuota("8")) {
		t.Errorf("quota changed while its profile was missing: %+v", rq.Spec)
	}
	testutil.MustCreate(ctx, t, e.c, &tensorstackv1beta1.QuotaProfile{ObjectMeta: metav1.ObjectMeta{Name: missing}, Spec: gpuQuota("1")})
	e.waitReady(ctx, t, a, corev1.ConditionTrue, project.ReasonReady)
	e.waitFor(ctx, t, a, project.ResourceQuotaName, rq, func() bool { return equality.Semantic.DeepEqual(rq.Spec, gpuQuota("1")) })
}

// testRefused: every bad input is refused, naming the field.
func (e *env) testRefused(t *testing.T) {
	ctx := testutil.SubtestContext(t)

	refused(t, "a name that is no namespace name", e.c.Create(ctx, newProject("bad.name")), "metadata.name")
	refused(t, "a name too long for a namespace", e.c.Create(ctx, newProject(strings.Repeat("a", 64))), "metadata.name")

	foreign := name("foreign")
	testutil.MustCreate(ctx, t, e.c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: foreign}})
	refused(t, "a namespace that is no Project's", e.c.Create(ctx, newProject(foreign)), "metadata.name", "not a Project's")

	both := newProject(name("both"))
	both.Spec.QuotaProfile = "demo"
	both.Spec.ResourceQuota = &tensorstackv1beta1.ProjectResourceQuota{Template: &tensorstackv1beta1.ProjectResourceQuotaTemplate{Spec: gpuQuota("1")}}
	refused(t, "a quota template and a quotaProfile", e.c.Create(ctx, both), "spec.quotaProfile")

	badPolicy := newProject(name("badpolicy"))
	badPolicy.Spec.NetworkPolicy = &tensorstackv1beta1.ProjectNetworkPolicy{Template: &tensorstackv1beta1.ProjectNetworkPolicyTemplate{Spec: networkingv1.NetworkPolicySpec{
		Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "300.0.0.0/33"}}}}},
	}}}
	refused(t, "a NetworkPolicy template that does not validate", e.c.Create(ctx, badPolicy), "spec.networkPolicy.template.spec.ingress[0].from[0].ipBlock.cidr")

	badQuota := newProject(name("badquota"))
	badQuota.Spec.ResourceQuota = &tensorstackv1beta1.ProjectResourceQuota{Template: &tensorstackv1beta1.ProjectResourceQuotaTemplate{Spec: corev1.ResourceQuotaSpec{
		Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")},
	}}}
	refused(t, "a quota template that does not validate", e.c.Create(ctx, badQuota), "spec.resourceQuota.template.spec.hard")

	badProfile := &tensorstackv1beta1.QuotaProfile{ObjectMeta: metav1.ObjectMeta{Name: name("badprofile")}, Spec: corev1.ResourceQuotaSpec{
		Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("-3")},
	}}
	refused(t, "a QuotaProfile that does not validate", e.c.Create(ctx, badProfile), "spec.hard")

	// An update that adds a bad template is refused too.
	ok := name("update")
	testutil.MustCreate(ctx, t, e.c, newProject(ok))
	e.waitReady(ctx, t, ok, corev1.ConditionTrue, project.ReasonReady)
	p := e.project(ctx, t, ok)
	p.Spec.NetworkPolicy = badPolicy.Spec.NetworkPolicy
	refused(t, "an update to a NetworkPolicy template that does not validate", e.c.Update(ctx, p), "spec.networkPolicy.template.spec.ingress[0].from[0].ipBlock.cidr")

	// None of the refused Projects made a namespace.
	for _, n := range []string{both.Name, badPolicy.Name, badQuota.Name} {
		if err := e.c.Get(ctx, keyOf(n), &corev1.Namespace{}); err == nil {
			t.Errorf("namespace %s exists for a refused Project", n)
		}
	}
}

// testDeleteKeepsNamespace: deleting a Project without the confirmation
// keeps its namespace and the data in it; a new Project of the same name
// takes the namespace back.
func (e *env) testDeleteKeepsNamespace(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	name := name("keep")
	testutil.MustCreate(ctx, t, e.c, newProject(name))
	e.waitReady(ctx, t, name, corev1.ConditionTrue, project.ReasonReady)
	data := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "data"}, Data: map[string]string{"k": "v"}}
	testutil.MustCreate(ctx, t, e.c, data)

	if err := e.c.Delete(ctx, newProject(name)); err != nil {
		t.Fatal(err)
	}
	e.waitGone(ctx, t, "", name, &tensorstackv1beta1.Project{})
	ns := &corev1.Namespace{}
	if err := e.c.Get(ctx, keyOf(name), ns); err != nil {
		t.Fatalf("namespace of the deleted Project: %v", err)
	}
	if !ns.DeletionTimestamp.IsZero() {
		t.Errorf("namespace %s is being deleted without the confirmation", name)
	}
	if err := e.c.Get(ctx, keyOf2(name, "data"), &corev1.ConfigMap{}); err != nil {
		t.Errorf("data in the namespace: %v", err)
	}

	testutil.MustCreate(ctx, t, e.c, newProject(name))
	e.waitReady(ctx, t, name, corev1.ConditionTrue, project.ReasonReady)
}

// testDeleteConfirmed: deleting a Project that carries the confirmation
// deletes its namespace.
func (e *env) testDeleteConfirmed(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	name := name("confirmed")
	p := newProject(name)
	p.Annotations = map[string]string{project.DeleteNamespaceAnnotationKey: "true"}
	testutil.MustCreate(ctx, t, e.c, p)
	e.waitReady(ctx, t, name, corev1.ConditionTrue, project.ReasonReady)
	if got := e.project(ctx, t, name).Finalizers; !containsString(got, project.Finalizer) {
		t.Fatalf("finalizers = %v, want %s", got, project.Finalizer)
	}
	if err := e.c.Delete(ctx, newProject(name)); err != nil {
		t.Fatal(err)
	}
	e.waitGone(ctx, t, "", name, &tensorstackv1beta1.Project{})
	ns := &corev1.Namespace{}
	// No namespace controller runs: the namespace stays Terminating.
	e.waitFor(ctx, t, "", name, ns, func() bool { return !ns.DeletionTimestamp.IsZero() })
}

// testForeignNamespace: a namespace that was never a Project's is neither
// taken over nor deleted, even when the webhook is bypassed by creating the
// namespace after its Project was admitted.
func (e *env) testForeignNamespace(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	name := name("late")
	// The namespace appears first with another Project's mark.
	testutil.MustCreate(ctx, t, e.c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{project.ProjectLabelKey: "someone-else"}}})
	err := e.c.Create(ctx, newProject(name))
	refused(t, "a namespace marked as another Project's", err, "metadata.name")
	if err := e.c.Get(ctx, keyOf(name), &corev1.Namespace{}); err != nil {
		t.Fatal(err)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
