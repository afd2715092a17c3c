package satoken

import (
	"fmt"
	"time"

	"github.com/accelstack/accelstack/pkg/duration"
)

// ParseDuration parses spec.duration, e.g. "3w" or "2h45m" ("y" is 365
// days); "0" returns 0, meaning no end.
func ParseDuration(s string) (time.Duration, error) {
	d, err := duration.Parse(s, time.Second)
	if err != nil {
		return 0, fmt.Errorf("duration %q: %w", s, err)
	}
	return d, nil
}
