package queue

import (
	"fmt"
	"time"

	"github.com/accelstack/accelstack/pkg/duration"
)

// ParseMaxDuration parses a Queue's maxDuration, e.g. "3w", "2h45m",
// "1h20m15s" or "500ms" ("y" is 365 days). "0" and "" mean no limit and
// return 0.
func ParseMaxDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := duration.Parse(s, time.Millisecond)
	if err != nil {
		return 0, fmt.Errorf("maxDuration %q: %w", s, err)
	}
	return d, nil
}
