package mlservice

import (
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
