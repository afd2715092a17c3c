// Package duration parses the durations of the platform's APIs, such as a
// Queue's spec.maxDuration and a ServiceAccountToken's spec.duration: "0",
// or integer amounts of units in decreasing order, y (365 days), w, d, h,
// m, s and, where the field allows it, ms — "3w", "2h45m", "1y2d3s".
package duration

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"time"
)

// pattern matches a duration; group 3+2i holds the amount of units[i].
var pattern = regexp.MustCompile(`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`)

// units are the units of the pattern's groups, largest first.
var units = []time.Duration{
	365 * 24 * time.Hour, 7 * 24 * time.Hour, 24 * time.Hour,
	time.Hour, time.Minute, time.Second, time.Millisecond,
}

// Errors of Parse.
var (
	// ErrSyntax says the text is no duration.
	ErrSyntax = errors.New("want a duration such as 3w, 2h45m or 1h20m15s")
	// ErrTooLong says the duration does not fit a time.Duration.
	ErrTooLong = errors.New("too long")
)

// Parse parses s, whose smallest unit may be finest: time.Second or
// time.Millisecond. "0" is 0; "" is ErrSyntax.
func Parse(s string, finest time.Duration) (time.Duration, error) {
	m := pattern.FindStringSubmatch(s)
	if m == nil || s == "" {
		return 0, ErrSyntax
	}
	var d time.Duration
	for i, unit := range units {
		digits := m[3+2*i]
		if digits == "" {
			continue
		}
		if unit < finest {
			return 0, ErrSyntax
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || n > (math.MaxInt64-int64(d))/int64(unit) {
			return 0, ErrTooLong
		}
		d += time.Duration(n) * unit
	}
	return d, nil
}
