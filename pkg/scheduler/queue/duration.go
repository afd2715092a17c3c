package queue

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"time"
)

// durationPattern is the pattern of Queue spec.maxDuration (also the CRD's).
var durationPattern = regexp.MustCompile(`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`)

// durationUnits are the units of the pattern's groups 3, 5, ..., 15.
var durationUnits = []time.Duration{
	365 * 24 * time.Hour, 7 * 24 * time.Hour, 24 * time.Hour,
	time.Hour, time.Minute, time.Second, time.Millisecond,
}

// ParseMaxDuration parses a Queue's maxDuration, e.g. "3w", "2h45m",
// "1h20m15s" ("y" is 365 days). "0" and "" mean no limit and return 0.
func ParseMaxDuration(s string) (time.Duration, error) {
	m := durationPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("maxDuration %q: want a duration such as 3w, 2h45m or 1h20m15s", s)
	}
	var d time.Duration
	for i, unit := range durationUnits {
		digits := m[3+2*i]
		if digits == "" {
			continue
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || n > (math.MaxInt64-int64(d))/int64(unit) {
			return 0, fmt.Errorf("maxDuration %q: too long", s)
		}
		d += time.Duration(n) * unit
	}
	return d, nil
}
