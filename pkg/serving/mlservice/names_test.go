package mlservice

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// seed is an MLService with releases a, b and c, canary b at 30%.
func seed() *tensorstackv1beta1.MLService {
	m := &tensorstackv1beta1.MLService{}
	m.Name, m.Namespace = "m", "ns"
	m.Spec.Default, m.Spec.Canary, m.Spec.CanaryTrafficPercent = "a", "b", ptr.To[int32](30)
	for _, n := range []string{"a", "b", "c"} {
		m.Spec.Releases = append(m.Spec.Releases, tensorstackv1beta1.ReleaseSpec{Name: n})
	}
	return m
}

// TestObjectNames checks that every object of an MLService of any valid
// name, with a release name of the longest allowed, is a DNS-1035 label
// (what a Service's name must be), that the names stay apart, and that
// names which fit keep the <mlservice>-<kind> form.
func TestObjectNames(t *testing.T) {
	long := strings.Repeat("r", 30)
	for _, name := range []string{"m", "llama2-7b-chat-triton-tensorrtllm", "a" + strings.Repeat("-b", 31)} {
		m := seed()
		m.Name = name
		m.Spec.Releases = append(m.Spec.Releases, tensorstackv1beta1.ReleaseSpec{Name: long})
		names := []string{m.Name, predictHost(m), transformerName(m), routerName(m), privateName(transformerName(m))}
		for _, r := range m.Spec.Releases {
			names = append(names, predictorName(m, r.Name), privateName(predictorName(m, r.Name)))
		}
		seen := map[string]bool{}
		for _, n := range names {
			if errs := validation.IsDNS1035Label(n); len(errs) > 0 {
				t.Errorf("MLService %s: %q: %v", name, n, errs)
			}
			if seen[n] {
				t.Errorf("MLService %s: %q twice", name, n)
			}
			seen[n] = true
		}
	}
	m := seed()
	m.Name = "llama2-7b-chat-triton-tensorrtllm"
	for got, want := range map[string]string{
		predictorName(m, "a"):                "llama2-7b-chat-triton-tensorrtllm-predict-a",
		predictHost(m):                       "llama2-7b-chat-triton-tensorrtllm-predict",
		routerName(m):                        "llama2-7b-chat-triton-tensorrtllm-router",
		privateName(predictorName(m, "a")):   "llama2-7b-chat-triton-tensorrtllm-predict-a-private",
		privateName(transformerName(seed())): "m-transformer-private",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
