package satoken

import (
	"testing"
	"time"
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
