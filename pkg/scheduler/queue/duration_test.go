package queue

import (
	"strings"
	"testing"
	"time"
)

func TestParseMaxDuration(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{in: "3w", want: 21 * day},
		{in: "2h45m", want: 2*time.Hour + 45*time.Minute},
		{in: "1h20m15s", want: time.Hour + 20*time.Minute + 15*time.Second},
		{in: "1y", want: 365 * day},
		{in: "2d", want: 2 * day},
		{in: "1y2w3d4h5m6s7ms", want: 365*day + 14*day + 3*day + 4*time.Hour + 5*time.Minute + 6*time.Second + 7*time.Millisecond},
		{in: "0", want: 0},
		{in: "", want: 0},
		{in: "0h", want: 0},
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "1m30s500ms", want: time.Minute + 30*time.Second + 500*time.Millisecond},
		{in: "1m5ms", want: time.Minute + 5*time.Millisecond},
		{in: "90m", want: 90 * time.Minute},
		{in: "007s", want: 7 * time.Second},
		{in: "292y", want: 292 * 365 * day},

		{in: "1x", wantErr: true},
		{in: "h", wantErr: true},
		{in: "1h1y", wantErr: true},
		{in: "1s1m", wantErr: true},
		{in: "1h1h", wantErr: true},
		{in: "-1h", wantErr: true},
		{in: "1.5h", wantErr: true},
		{in: "1H", wantErr: true},
		{in: " 1h", wantErr: true},
		{in: "1h ", wantErr: true},
		{in: "00", wantErr: true},
		{in: "10", wantErr: true},
		{in: "1us", wantErr: true},

		{in: "99999999999y", wantErr: true},
		{in: "293y", wantErr: true},
		{in: "292y52w", wantErr: true},
		{in: "99999999999999999999ms", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMaxDuration(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseMaxDuration(%q) = %v, want an error", tt.in, got)
				}
				if !strings.Contains(err.Error(), tt.in) {
					t.Errorf("error %q does not quote the input %q", err, tt.in)
				}
				if got != 0 {
					t.Errorf("ParseMaxDuration(%q) returned %v along with its error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseMaxDuration(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseMaxDuration(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseMaxDurationOverflowMessage(t *testing.T) {
	_, err := ParseMaxDuration("99999999999y")
	if err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("error = %v, want one saying the duration is too long", err)
	}
}
