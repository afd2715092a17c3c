package mlservice

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// TestStatusURLs checks the URLs an MLService's status shows: in-cluster
// without a serving domain, the gateway's serving hosts with one on the raw
// backend, and Knative's own URL of a release whatever the domain.
func TestStatusURLs(t *testing.T) {
	m := seed()
	states := map[string]ComponentState{predictorName(m, "a"): {Ready: true, URL: "http://m-predict-a.ns.knative.example"}}
	urls := func(raw bool, domain string) []string {
		var status tensorstackv1beta1.MLServiceStatus
		fillStatus(m, &status, states, nil, true, false, raw, domain, metav1.Now())
		out := []string{status.Address.URL}
		for _, r := range status.Releases {
			out = append(out, r.URL)
		}
		return out
	}
	for _, tc := range []struct {
		raw    bool
		domain string
		want   []string
	}{
		{true, "", []string{"http://m.ns.svc.cluster.local", "http://m-predict-a.ns.svc.cluster.local", "http://m-predict-b.ns.svc.cluster.local", "http://m-predict-c.ns.svc.cluster.local"}},
		{true, "serving.example.com", []string{"https://m.ns.serving.example.com", "https://m-predict-a.ns.serving.example.com", "https://m-predict-b.ns.serving.example.com", "https://m-predict-c.ns.serving.example.com"}},
		{false, "serving.example.com", []string{"http://m.ns.svc.cluster.local", "http://m-predict-a.ns.knative.example", "http://m-predict-b.ns.svc.cluster.local", "http://m-predict-c.ns.svc.cluster.local"}},
	} {
		got := urls(tc.raw, tc.domain)
		if len(got) != len(tc.want) {
			t.Fatalf("raw=%v domain=%q: %v", tc.raw, tc.domain, got)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("raw=%v domain=%q: URL %d is %s, want %s", tc.raw, tc.domain, i, got[i], tc.want[i])
			}
		}
	}
}
