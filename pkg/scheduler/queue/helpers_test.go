package queue

import (
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// rl builds a ResourceList from name, quantity pairs.
func rl(kv ...string) corev1.ResourceList {
	if len(kv)%2 != 0 {
		panic("rl: odd number of arguments")
	}
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// sameResources reports whether a and b name the same resources with equal
// amounts, and describes the first difference.
func sameResources(a, b corev1.ResourceList) (bool, string) {
	names := map[corev1.ResourceName]bool{}
	for n := range a {
		names[n] = true
	}
	for n := range b {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, string(n))
	}
	sort.Strings(sorted)
	for _, s := range sorted {
		n := corev1.ResourceName(s)
		qa, okA := a[n]
		qb, okB := b[n]
		if okA != okB {
			return false, "resource " + s + " present in only one list (" + show(a) + " vs " + show(b) + ")"
		}
		if qa.Cmp(qb) != 0 {
			return false, "resource " + s + ": " + qa.String() + " vs " + qb.String()
		}
	}
	return true, ""
}

func show(r corev1.ResourceList) string {
	parts := make([]string, 0, len(r))
	for n, q := range r {
		parts = append(parts, string(n)+"="+q.String())
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ", ") + "}"
}

func assertResources(t *testing.T, got, want corev1.ResourceList) {
	t.Helper()
	if ok, diff := sameResources(got, want); !ok {
		t.Errorf("got %s, want %s: %s", show(got), show(want), diff)
	}
}
