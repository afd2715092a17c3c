package duration

import (
	"errors"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		in      string
		finest  time.Duration
		want    time.Duration
		wantErr error
	}{
		{in: "3w", finest: time.Second, want: 21 * day},
		{in: "2h45m", finest: time.Second, want: 2*time.Hour + 45*time.Minute},
		{in: "1y2w3d4h5m6s7ms", finest: time.Millisecond, want: 382*day + 4*time.Hour + 5*time.Minute + 6*time.Second + 7*time.Millisecond},
		{in: "0", finest: time.Second, want: 0},
		{in: "007s", finest: time.Second, want: 7 * time.Second},
		{in: "292y", finest: time.Second, want: 292 * 365 * day},
		{in: "10ms", finest: time.Second, wantErr: ErrSyntax},
		{in: "", finest: time.Second, wantErr: ErrSyntax},
		{in: "1h1w", finest: time.Second, wantErr: ErrSyntax},
		{in: "1.5h", finest: time.Second, wantErr: ErrSyntax},
		{in: "-1h", finest: time.Second, wantErr: ErrSyntax},
		{in: "10", finest: time.Second, wantErr: ErrSyntax},
		{in: "293y", finest: time.Second, wantErr: ErrTooLong},
		{in: "99999999999999999999ms", finest: time.Millisecond, wantErr: ErrTooLong},
	} {
		got, err := Parse(tc.in, tc.finest)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && got != tc.want) {
			t.Errorf("Parse(%q, %v) = %v, %v; want %v, %v", tc.in, tc.finest, got, err, tc.want, tc.wantErr)
		}
	}
}
