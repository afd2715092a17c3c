package satoken

import (
	"testing"
	"time"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{in: "1h", want: time.Hour},
		{in: "3w", want: 21 * 24 * time.Hour},
		{in: "2h45m", want: 2*time.Hour + 45*time.Minute},
		{in: "1y2d3s", want: 367*24*time.Hour + 3*time.Second},
		{in: "0", want: 0},
		{in: "", wantErr: true},
		{in: "1h1w", wantErr: true},
		{in: "10ms", wantErr: true},
		{in: "-1h", wantErr: true},
		{in: "99999999999999y", wantErr: true},
	} {
		got, err := ParseDuration(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseDuration(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestDurationBounded: a ServiceAccountToken issues tokens for at most the
// maximum duration; 0 means the maximum, and a longer duration is refused.
func TestDurationBounded(t *testing.T) {
	for _, tc := range []struct {
		max     time.Duration
		in      string
		want    time.Duration
		wantErr bool
	}{
		{in: "0", want: DefaultMaxDuration},
		{in: "1y", want: DefaultMaxDuration},
		{in: "1y1s", wantErr: true},
		{in: "100y", wantErr: true},
		{max: 24 * time.Hour, in: "0", want: 24 * time.Hour},
		{max: 24 * time.Hour, in: "3h", want: 3 * time.Hour},
		{max: 24 * time.Hour, in: "2d", wantErr: true},
	} {
		r := &Reconciler{maxDuration: tc.max}
		sat := &tensorstackv1beta1.ServiceAccountToken{Spec: tensorstackv1beta1.ServiceAccountTokenSpec{Duration: tc.in}}
		got, err := r.duration(sat)
		if (err != nil) != tc.wantErr {
			t.Errorf("max %v, duration %q: error = %v, want error %v", tc.max, tc.in, err, tc.wantErr)
			continue
		}
		if got != tc.want {
			t.Errorf("max %v, duration %q = %v, want %v", tc.max, tc.in, got, tc.want)
		}
	}
}
