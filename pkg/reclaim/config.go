package reclaim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// EnabledLabelKey is the Namespace label that opts a namespace in to the
// Resource Keeper, with the value EnabledLabelValue. It is a label, not an
// annotation, so that the Keeper lists the opted-in namespaces by selector.
const EnabledLabelKey = "tensorstack.dev/resource-keeper"

// EnabledLabelValue is the value of EnabledLabelKey that opts in.
const EnabledLabelValue = "enabled"

// The Namespace annotations of a namespace's thresholds. They are the
// admin's: namespaces are theirs, so a project's users cannot loosen them.
const (
	// IdleAfterAnnotationKey is how long a workload must go without activity
	// before it is Idle, a Go duration such as 1h or 90m.
	IdleAfterAnnotationKey = "tensorstack.dev/idle-after"
	// SuspendAfterAnnotationKey is how long a workload must stay Idle before
	// it is suspended, a Go duration such as 24h.
	SuspendAfterAnnotationKey = "tensorstack.dev/suspend-after"
	// GPUUtilizationThresholdAnnotationKey is the GPU utilization, in percent
	// from 0 to 100 (a trailing % is allowed), above which a GPU counts as
	// in use.
	GPUUtilizationThresholdAnnotationKey = "tensorstack.dev/gpu-utilization-threshold"
)

// The seed's thresholds.
const (
	DefaultIdleAfter               = time.Hour
	DefaultSuspendAfter            = 24 * time.Hour
	DefaultGPUUtilizationThreshold = 5.0
)

// MinDuration is the least idle-after or suspend-after a namespace may set:
// shorter would reclaim between two probes.
const MinDuration = time.Minute

// Config is the Resource Keeper's settings of one namespace.
type Config struct {
	// IdleAfter is how long without activity makes a workload Idle.
	IdleAfter time.Duration
	// SuspendAfter is how long a workload stays Idle before it is suspended.
	SuspendAfter time.Duration
	// GPUUtilizationThreshold is the utilization in percent above which a
	// GPU is in use.
	GPUUtilizationThreshold float64
}

// DefaultConfig is the seed's configuration: Idle after 1h, suspended after
// 24h Idle, GPUs in use above 5%.
func DefaultConfig() Config {
	return Config{
		IdleAfter:               DefaultIdleAfter,
		SuspendAfter:            DefaultSuspendAfter,
		GPUUtilizationThreshold: DefaultGPUUtilizationThreshold,
	}
}

// withDefaults fills the zero fields of c from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.IdleAfter <= 0 {
		c.IdleAfter = d.IdleAfter
	}
	if c.SuspendAfter <= 0 {
		c.SuspendAfter = d.SuspendAfter
	}
	if c.GPUUtilizationThreshold <= 0 {
		c.GPUUtilizationThreshold = d.GPUUtilizationThreshold
	}
	return c
}

// Enabled tells whether the namespace opted in.
func Enabled(ns *corev1.Namespace) bool {
	return ns.Labels[EnabledLabelKey] == EnabledLabelValue
}

// ParseConfig reads a namespace's thresholds from its annotations over
// defaults. A missing annotation keeps the default; an invalid one keeps
// the default too and is reported in the returned error, one line each, so
// that a typo of the admin never stops the Keeper.
func ParseConfig(ns *corev1.Namespace, defaults Config) (Config, error) {
	c := defaults
	var errs []error
	if v, ok := ns.Annotations[IdleAfterAnnotationKey]; ok {
		d, err := parseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w; using %s", IdleAfterAnnotationKey, v, err, formatDuration(c.IdleAfter)))
		} else {
			c.IdleAfter = d
		}
	}
	if v, ok := ns.Annotations[SuspendAfterAnnotationKey]; ok {
		d, err := parseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w; using %s", SuspendAfterAnnotationKey, v, err, formatDuration(c.SuspendAfter)))
		} else {
			c.SuspendAfter = d
		}
	}
	if v, ok := ns.Annotations[GPUUtilizationThresholdAnnotationKey]; ok {
		p, err := parsePercent(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w; using %g%%", GPUUtilizationThresholdAnnotationKey, v, err, c.GPUUtilizationThreshold))
		} else {
			c.GPUUtilizationThreshold = p
		}
	}
	return c, errors.Join(errs...)
}

func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		return 0, errors.New("not a duration such as 1h or 90m")
	}
	if d < MinDuration {
		return 0, fmt.Errorf("less than %s", formatDuration(MinDuration))
	}
	return d, nil
}

func parsePercent(v string) (float64, error) {
	p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
	if err != nil {
		return 0, errors.New("not a number of percent")
	}
	if p < 0 || p > 100 {
		return 0, errors.New("not between 0 and 100")
	}
	return p, nil
}

// formatDuration writes d to the minute from one minute on (1h2m, 24h, 5m)
// and to the second below (45s).
func formatDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return d.Truncate(time.Second).String()
	}
	s := d.Truncate(time.Minute).String()
	s = strings.TrimSuffix(s, "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
