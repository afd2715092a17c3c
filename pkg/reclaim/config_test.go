package reclaim

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseConfig(t *testing.T) {
	defaults := DefaultConfig()
	testCases := []struct {
		name        string
		annotations map[string]string
		want        Config
		wantErrs    []string
	}{
		{name: "no annotations: the seed's defaults", want: Config{IdleAfter: time.Hour, SuspendAfter: 24 * time.Hour, GPUUtilizationThreshold: 5}},
		{
			name: "every annotation",
			annotations: map[string]string{
				IdleAfterAnnotationKey: "90m", SuspendAfterAnnotationKey: "48h", GPUUtilizationThresholdAnnotationKey: "10%",
			},
			want: Config{IdleAfter: 90 * time.Minute, SuspendAfter: 48 * time.Hour, GPUUtilizationThreshold: 10},
		},
		{
			name:        "threshold without % and zero",
			annotations: map[string]string{GPUUtilizationThresholdAnnotationKey: " 0 "},
			want:        Config{IdleAfter: time.Hour, SuspendAfter: 24 * time.Hour, GPUUtilizationThreshold: 0},
		},
		{
			name: "invalid values keep the defaults, each reported",
			annotations: map[string]string{
				IdleAfterAnnotationKey: "an hour", SuspendAfterAnnotationKey: "10s", GPUUtilizationThresholdAnnotationKey: "120",
			},
			want: defaults,
			wantErrs: []string{
				`tensorstack.dev/idle-after="an hour": not a duration such as 1h or 90m; using 1h`,
				`tensorstack.dev/suspend-after="10s": less than 1m; using 24h`,
				`tensorstack.dev/gpu-utilization-threshold="120": not between 0 and 100; using 5%`,
			},
		},
		{
			name:        "one invalid, one valid",
			annotations: map[string]string{IdleAfterAnnotationKey: "-1h", SuspendAfterAnnotationKey: "2h"},
			want:        Config{IdleAfter: time.Hour, SuspendAfter: 2 * time.Hour, GPUUtilizationThreshold: 5},
			wantErrs:    []string{`tensorstack.dev/idle-after="-1h": less than 1m; using 1h`},
		},
		{
			name:        "threshold not a number",
			annotations: map[string]string{GPUUtilizationThresholdAnnotationKey: "low"},
			want:        defaults,
			wantErrs:    []string{`tensorstack.dev/gpu-utilization-threshold="low": not a number of percent; using 5%`},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: tc.annotations}}
			got, err := ParseConfig(ns, defaults)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			var gotErrs []string
			if err != nil {
				gotErrs = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tc.wantErrs, gotErrs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		want   bool
	}{
		{labels: nil, want: false},
		{labels: map[string]string{EnabledLabelKey: "enabled"}, want: true},
		{labels: map[string]string{EnabledLabelKey: "disabled"}, want: false},
		{labels: map[string]string{EnabledLabelKey: "true"}, want: false},
	} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}}
		if got := Enabled(ns); got != tc.want {
			t.Errorf("Enabled(%v) = %v, want %v", tc.labels, got, tc.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want string
	}{
		{in: 0, want: "0s"},
		{in: -time.Second, want: "0s"},
		{in: 45*time.Second + 300*time.Millisecond, want: "45s"},
		{in: 5*time.Minute + 59*time.Second, want: "5m"},
		{in: time.Hour, want: "1h"},
		{in: time.Hour + 2*time.Minute + 3*time.Second, want: "1h2m"},
		{in: 24 * time.Hour, want: "24h"},
		{in: 25*time.Hour + 30*time.Minute, want: "25h30m"},
	} {
		if got := formatDuration(tc.in); got != tc.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
