package harness

import (
	"slices"
	"time"
)

// Percentile returns the q-quantile (0..1) of ds by the nearest rank, 0 for
// none; the bench programs report their latencies with it.
func Percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}
