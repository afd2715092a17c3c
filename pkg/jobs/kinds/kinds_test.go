package kinds_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/kinds"
	"github.com/accelstack/accelstack/pkg/manager"
	"github.com/accelstack/accelstack/pkg/project"
	"github.com/accelstack/accelstack/pkg/queues"
)

// root is the repository root, from this package's directory.
const root = "../../.."

// documents reads the YAML documents of a file under deploy/ into out,
// one new value of out's element type per document.
func documents[T any](t *testing.T, path string) []T {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var v T
		if err := yaml.UnmarshalStrict([]byte(doc), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	return out
}

// Every engine kind is registered with the GVK of its objects, and every
// registered kind has a distinct GVK and a resource.
func TestRegistryMatchesKinds(t *testing.T) {
	scheme, err := manager.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, k := range kinds.All() {
		gvk, err := apiutil.GVKForObject(k.NewObject(), scheme)
		if err != nil {
			t.Fatal(err)
		}
		if k.Info().GVK != gvk || !k.Info().Engine {
			t.Errorf("%s registers %v (engine %v), want %v on the engine", k.Component(), k.Info().GVK, k.Info().Engine, gvk)
		}
	}
	for _, i := range kinds.Registered() {
		if seen[i.GVK.String()] || i.Resource == "" {
			t.Errorf("%v registered twice or without a resource", i.GVK)
		}
		seen[i.GVK.String()] = true
		if _, err := scheme.New(i.GVK); err != nil {
			t.Errorf("%v is not served: %v", i.GVK, err)
		}
	}
}

// The jobs webhook configuration validates every engine kind, at the path
// the engine serves, and nothing else.
func TestJobsWebhookMatchesRegistry(t *testing.T) {
	type hook struct{ Path, Group, Version, Resource, Ops string }
	var want, got []hook
	for _, i := range kinds.Registered() {
		if i.Engine {
			want = append(want, hook{jobs.ValidatePath(i.GVK), i.GVK.Group, i.GVK.Version, i.Resource, "CREATE,UPDATE"})
		}
	}
	for _, c := range documents[admissionregistrationv1.ValidatingWebhookConfiguration](t, "deploy/controllers/jobs-webhook.yaml") {
		for _, w := range c.Webhooks {
			for _, r := range w.Rules {
				for _, res := range r.Resources {
					var ops []string
					for _, o := range r.Operations {
						ops = append(ops, string(o))
					}
					got = append(got, hook{*w.ClientConfig.Service.Path, strings.Join(r.APIGroups, ","), strings.Join(r.APIVersions, ","), res, strings.Join(ops, ",")})
				}
			}
		}
	}
	sortBy(want, func(h hook) string { return h.Path })
	sortBy(got, func(h hook) string { return h.Path })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deploy/controllers/jobs-webhook.yaml (-registry +file):\n%s", diff)
	}
}

// The queue admission webhook checks, at creation, the jobs of every kind
// registered with a QueueMatch, under that match condition, and no other;
// the queue grant webhook marks them under the same condition.
func TestQueueWebhookMatchesRegistry(t *testing.T) {
	want := map[string][]string{} // match condition → group/resource
	for _, i := range kinds.Registered() {
		if i.QueueMatch != "" {
			want[i.QueueMatch] = append(want[i.QueueMatch], i.GroupResource().String())
		}
	}
	got := map[string][]string{}
	for _, c := range documents[admissionregistrationv1.ValidatingWebhookConfiguration](t, "deploy/controllers/queues-webhook.yaml") {
		for _, w := range c.Webhooks {
			if *w.ClientConfig.Service.Path != queues.JobPath {
				continue
			}
			if len(w.MatchConditions) != 1 {
				t.Fatalf("webhook %s: %d match conditions, want 1", w.Name, len(w.MatchConditions))
			}
			for _, r := range w.Rules {
				if !slices.Equal(r.Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}) {
					t.Errorf("webhook %s checks %v, want CREATE only", w.Name, r.Operations)
				}
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						got[w.MatchConditions[0].Expression] = append(got[w.MatchConditions[0].Expression], res+"."+g)
					}
				}
			}
		}
	}
	for _, m := range []map[string][]string{want, got} {
		for _, v := range m {
			sort.Strings(v)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deploy/controllers/queues-webhook.yaml, job webhooks by match condition (-registry +file):\n%s", diff)
	}
	grants := map[string][]string{} // match condition → group/resource
	for _, c := range documents[admissionregistrationv1.MutatingWebhookConfiguration](t, "deploy/controllers/queue-grants-webhook.yaml") {
		for _, w := range c.Webhooks {
			for _, r := range w.Rules {
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						grants[w.MatchConditions[0].Expression] = append(grants[w.MatchConditions[0].Expression], res+"."+g)
					}
				}
			}
		}
	}
	for match, resources := range want {
		for _, res := range resources {
			if !slices.Contains(grants[match], res) {
				t.Errorf("deploy/controllers/queue-grants-webhook.yaml does not mark %s under %q", res, match)
			}
		}
	}
}

// A project member (a token's, and the build scope's) and a Project's
// managed-project-sa may create and delete the jobs of every kind; the controllers may read each kind, and
// write the status of the engine's.
func TestRolesCoverRegistry(t *testing.T) {
	roles := map[string]rbacv1.ClusterRole{}
	for _, r := range documents[rbacv1.ClusterRole](t, "deploy/controllers/project-roles.yaml") {
		roles[r.Name] = r
	}
	for _, r := range documents[rbacv1.ClusterRole](t, "deploy/rbac/role.yaml") {
		if r.Kind == "ClusterRole" {
			roles["controllers"] = r
		}
	}
	for _, i := range kinds.Registered() {
		for _, role := range []string{"accelstack-managed-project-sa", "accelstack-project-member", "accelstack-project-build"} {
			for _, verb := range []string{"get", "list", "watch", "create", "delete"} {
				if !allows(roles[role], i.GVK.Group, i.Resource, verb) {
					t.Errorf("ClusterRole %s cannot %s %s", role, verb, i.GroupResource())
				}
			}
		}
		for _, verb := range []string{"get", "list", "watch"} {
			if !allows(roles["controllers"], i.GVK.Group, i.Resource, verb) {
				t.Errorf("the controllers cannot %s %s", verb, i.GroupResource())
			}
		}
		if i.Engine && !allows(roles["controllers"], i.GVK.Group, i.Resource+"/status", "update") {
			t.Errorf("the controllers cannot update the status of %s", i.GroupResource())
		}
	}
}

// allows reports whether role grants verb on group's resource.
func allows(role rbacv1.ClusterRole, group, resource, verb string) bool {
	for _, r := range role.Rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) &&
			(slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, "*")) {
			return true
		}
	}
	return false
}

// The alert on failed jobs names every kind the workload metrics export a
// phase of, in both forms of the rules.
func TestAlertRulesMatchRegistry(t *testing.T) {
	var want []string
	for _, i := range kinds.Registered() {
		if i.PhasePath != nil {
			want = append(want, i.GVK.Kind)
		}
	}
	sort.Strings(want)
	re := regexp.MustCompile(`accelstack_workload_phase\{kind=~"([^"]+)", phase="Failed"\}`)
	for _, path := range []string{"deploy/monitoring/alerts.rules.yaml", "deploy/monitoring/prometheusrule.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		m := re.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: no alert on failed jobs", path)
		}
		got := strings.Split(string(m[1]), "|")
		sort.Strings(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: kinds of the failed-job alert (-registry +file):\n%s", path, diff)
		}
	}
}

// The default QuotaProfile counts the objects of every job kind.
func TestDefaultQuotaProfileCountsRegistry(t *testing.T) {
	hard := project.DefaultQuotaProfile().Spec.Hard
	for _, i := range kinds.Registered() {
		name := corev1.ResourceName("count/" + i.GroupResource().String())
		if _, ok := hard[name]; !ok {
			t.Errorf("the default QuotaProfile does not count %s", name)
		}
	}
}

// sortBy sorts s by key.
func sortBy[T any](s []T, key func(T) string) {
	sort.Slice(s, func(a, b int) bool { return key(s[a]) < key(s[b]) })
}
