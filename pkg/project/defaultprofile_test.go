package project

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// TestDefaultQuotaProfileCounts: the default QuotaProfile bounds the count
// of every namespaced kind of deploy/crds that tenants create, and of
// pods, ConfigMaps and Secrets, and asks for no compute quota (which would
// make every pod declare requests).
func TestDefaultQuotaProfileCounts(t *testing.T) {
	qp := DefaultQuotaProfile()
	if qp.Name != DefaultQuotaProfileName || qp.PodSecurity != tensorstackv1beta1.PodSecurityBaseline {
		t.Errorf("name %q podSecurity %q", qp.Name, qp.PodSecurity)
	}
	hard := qp.Spec.Hard
	for _, name := range []corev1.ResourceName{"pods", "count/configmaps", "count/secrets", "count/services", "persistentvolumeclaims"} {
		if q, ok := hard[name]; !ok || q.Sign() <= 0 {
			t.Errorf("%s = %v, want a positive count", name, q)
		}
	}
	for name := range hard {
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory || strings.HasPrefix(string(name), "requests.") || strings.HasPrefix(string(name), "limits.") {
			t.Errorf("compute quota %s in the default profile", name)
		}
	}

	crds, err := filepath.Glob("../../deploy/crds/*.yaml")
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRDs under deploy/crds: %v", err)
	}
	// Kinds the platform creates for a tenant's job, one or a few per job.
	notCounted := map[string]bool{"podgroups.scheduler.tensorstack.dev": true, "scaleplans.elastic.iml.github.io": true}
	for _, f := range crds {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			metav1.ObjectMeta `json:"metadata"`
			Spec              struct {
				Scope string `json:"scope"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if crd.Name == "" || crd.Spec.Scope != "Namespaced" || notCounted[crd.Name] {
			continue
		}
		if q, ok := hard[corev1.ResourceName("count/"+crd.Name)]; !ok || q.Cmp(resource.MustParse("1")) < 0 {
			t.Errorf("count/%s = %v, want a count in the default QuotaProfile", crd.Name, q)
		}
	}
}

// TestEnsureDefaultProfile: the default QuotaProfile is created when
// missing, and one an administrator changed is kept.
func TestEnsureDefaultProfile(t *testing.T) {
	e := newFakeEnv(t, nil)
	ctx := context.Background()
	if err := ensureDefaultProfile(ctx, e.c); err != nil {
		t.Fatal(err)
	}
	qp := &tensorstackv1beta1.QuotaProfile{}
	if !e.get(t, "", DefaultQuotaProfileName, qp) || len(qp.Spec.Hard) != len(defaultObjectCounts) {
		t.Fatalf("default QuotaProfile %+v", qp.Spec)
	}
	qp.Spec.Hard = corev1.ResourceList{"pods": resource.MustParse("10")}
	if err := e.c.Update(ctx, qp); err != nil {
		t.Fatal(err)
	}
	if err := ensureDefaultProfile(ctx, e.c); err != nil {
		t.Fatal(err)
	}
	e.get(t, "", DefaultQuotaProfileName, qp)
	if len(qp.Spec.Hard) != 1 {
		t.Errorf("the administrator's profile was changed: %+v", qp.Spec.Hard)
	}
}
