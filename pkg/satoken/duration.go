package satoken

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"time"
)

// durationPattern is the pattern of spec.duration (also the CRD's).
var durationPattern = regexp.MustCompile(`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?)$`)

// durationUnits are the units of the pattern's groups 3, 5, ..., 13.
var durationUnits = []time.Duration{
	365 * 24 * time.Hour, 7 * 24 * time.Hour, 24 * time.Hour,
	time.Hour, time.Minute, time.Second,
}

// ParseDuration parses spec.duration, e.g. "3w" or "2h45m" ("y" is 365
// days); "0" returns 0, meaning no end.
func ParseDuration(s string) (time.Duration, error) {
	m := durationPattern.FindStringSubmatch(s)
	if m == nil || s == "" {
		return 0, fmt.Errorf("duration %q: want a duration such as 1h, 3w or 2h45m", s)
	}
	var d time.Duration
	for i, unit := range durationUnits {
		digits := m[3+2*i]
		if digits == "" {
			continue
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || n > (math.MaxInt64-int64(d))/int64(unit) {
			return 0, fmt.Errorf("duration %q: too long", s)
		}
		d += time.Duration(n) * unit
	}
	return d, nil
}
