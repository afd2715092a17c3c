package workflow

import (
	"fmt"
	"hash/fnv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// suffixAlphabet is the alphabet of generated name suffixes, as
// Kubernetes' generateName uses: no vowels, no confusable characters.
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// suffix returns 5 characters derived from parts. What a run creates is
// named with it rather than at random, so that a reconcile repeated before
// the run's status records a name finds the object instead of creating a
// second one.
func suffix(parts ...string) string {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	v := h.Sum64()
	var b [5]byte
	for i := range b {
		b[i] = suffixAlphabet[v%uint64(len(suffixAlphabet))]
		v /= uint64(len(suffixAlphabet))
	}
	return string(b[:])
}

// childName returns prefix-suffix, shortening prefix to keep the name a
// valid object name.
func childName(prefix, sfx string) string {
	max := validation.DNS1123SubdomainMaxLength - len(sfx) - 1
	if len(prefix) > max {
		prefix = strings.TrimRight(prefix[:max], "-.")
	}
	return prefix + "-" + sfx
}

// labelValue returns name as a label value: itself when short enough, else
// its start and a hash of the whole.
func labelValue(name string) string {
	if len(name) <= validation.LabelValueMaxLength {
		return name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return fmt.Sprintf("%s-%08x", strings.TrimRight(name[:validation.LabelValueMaxLength-9], "-_."), h.Sum32())
}
