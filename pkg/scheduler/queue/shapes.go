package queue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Shape is the largest pod a resource shape allows: each resource it names
// at most its amount, resources it does not name not at all.
type Shape corev1.ResourceList

// ParseShapes reads one profile of the ConfigMap t9k-system/resource-shapes:
// the value of the profile's key, a YAML list of resource maps, e.g.
//
//	small: |
//	  - {cpu: "4", memory: 16Gi}
//	  - {cpu: "8", memory: 32Gi, nvidia.com/gpu: "1"}
func ParseShapes(data map[string]string, profile string) ([]Shape, error) {
	raw, ok := data[profile]
	if !ok {
		return nil, fmt.Errorf("no key %q in ConfigMap t9k-system/resource-shapes", profile)
	}
	var shapes []Shape
	if err := yaml.UnmarshalStrict([]byte(raw), &shapes); err != nil {
		return nil, fmt.Errorf("key %q of ConfigMap t9k-system/resource-shapes: %w", profile, err)
	}
	if len(shapes) == 0 {
		return nil, fmt.Errorf("key %q of ConfigMap t9k-system/resource-shapes lists no shapes", profile)
	}
	for i, s := range shapes {
		if len(s) == 0 {
			return nil, fmt.Errorf("key %q of ConfigMap t9k-system/resource-shapes: shape %d names no resource", profile, i)
		}
		for name, q := range s {
			if errs := validation.IsQualifiedName(string(name)); len(errs) > 0 {
				return nil, fmt.Errorf("key %q of ConfigMap t9k-system/resource-shapes: shape %d: resource name %q: %s", profile, i, name, errs[0])
			}
			if q.Sign() < 0 {
				return nil, fmt.Errorf("key %q of ConfigMap t9k-system/resource-shapes: shape %d: %s is negative", profile, i, name)
			}
		}
	}
	return shapes, nil
}

// Fits reports whether requests fit within one of shapes; when none fits
// it names a resource that keeps the first shape from fitting.
func Fits(shapes []Shape, requests corev1.ResourceList) (bool, corev1.ResourceName) {
	var blocking corev1.ResourceName
	for i, s := range shapes {
		res, over := Over(corev1.ResourceList(s), nil, requests)
		if !over {
			res, over = unnamed(s, requests)
		}
		if !over {
			return true, ""
		}
		if i == 0 {
			blocking = res
		}
	}
	return false, blocking
}

// unnamed returns a resource requests asks for that s does not name.
func unnamed(s Shape, requests corev1.ResourceList) (corev1.ResourceName, bool) {
	for _, name := range sortedNames(requests) {
		q := requests[name]
		if _, ok := s[name]; !ok && q.Sign() > 0 {
			return name, true
		}
	}
	return "", false
}
