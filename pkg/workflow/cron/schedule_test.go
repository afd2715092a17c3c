package cron

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// at is a time of the controller's time zone.
func at(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04:05", s, time.Local)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseSchedule(t *testing.T) {
	testCases := []struct {
		schedule string
		wantErr  string
		from     string
		wantNext string
	}{
		{schedule: "*/1 * * * *", from: "2021-09-08 09:30:00", wantNext: "2021-09-08 09:31:00"},
		{schedule: "1 0 * * *", from: "2021-09-08 09:30:00", wantNext: "2021-09-09 00:01:00"},
		{schedule: "45 23 * * 6", from: "2021-09-08 09:30:00", wantNext: "2021-09-11 23:45:00"},
		{schedule: "*/5 1,2,3 * * *", from: "2021-09-08 03:55:00", wantNext: "2021-09-09 01:00:00"},
		{schedule: "@hourly", from: "2021-09-08 09:30:00", wantNext: "2021-09-08 10:00:00"},
		{schedule: "@daily", from: "2021-09-08 09:30:00", wantNext: "2021-09-09 00:00:00"},
		{schedule: "@every 90m", from: "2021-09-08 09:30:00", wantNext: "2021-09-08 11:00:00"},
		{schedule: "  0 9 * * MON-FRI ", from: "2021-09-10 09:30:00", wantNext: "2021-09-13 09:00:00"},
		{schedule: "", wantErr: "empty schedule"},
		{schedule: "* * * *", wantErr: "expected exactly 5 fields"},
		{schedule: "* * * * * *", wantErr: "expected exactly 5 fields"},
		{schedule: "61 * * * *", wantErr: "above maximum"},
		{schedule: "@fortnightly", wantErr: "unrecognized descriptor"},
		{schedule: "@every 30s", wantErr: "more frequent than once every 1m0s"},
		{schedule: "TZ=UTC", wantErr: "time zone"},
		{schedule: "CRON_TZ=Asia/Shanghai 0 * * * *", wantErr: "time zone"},
		{schedule: "0 0 30 2 *", wantErr: "matches no time"},
	}
	for _, tc := range testCases {
		t.Run(tc.schedule, func(t *testing.T) {
			s, err := ParseSchedule(tc.schedule)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseSchedule(%q) = %v, want an error containing %q", tc.schedule, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSchedule(%q): %v", tc.schedule, err)
			}
			if got := s.Next(at(tc.from)); !got.Equal(at(tc.wantNext)) {
				t.Errorf("Next(%s) = %s, want %s", tc.from, got, tc.wantNext)
			}
		})
	}
}

func TestScheduledTimes(t *testing.T) {
	testCases := []struct {
		name          string
		schedule      string
		earliest, now string
		wantLatest    string // empty: none due
		wantPassed    int
		wantMany      bool
		wantNext      string
	}{
		{
			name: "none due yet", schedule: "* * * * *",
			earliest: "2026-01-01 10:00:20", now: "2026-01-01 10:00:59",
			wantNext: "2026-01-01 10:01:00",
		},
		{
			name: "due exactly now", schedule: "* * * * *",
			earliest: "2026-01-01 10:00:20", now: "2026-01-01 10:01:00",
			wantLatest: "2026-01-01 10:01:00", wantNext: "2026-01-01 10:02:00",
		},
		{
			name: "the last time is not due again", schedule: "* * * * *",
			earliest: "2026-01-01 10:01:00", now: "2026-01-01 10:01:30",
			wantNext: "2026-01-01 10:02:00",
		},
		{
			name: "late: the latest, earlier ones counted", schedule: "*/5 * * * *",
			earliest: "2026-01-01 10:00:00", now: "2026-01-01 10:17:00",
			wantLatest: "2026-01-01 10:15:00", wantPassed: 2, wantNext: "2026-01-01 10:20:00",
		},
		{
			name: "exactly maxWalk times", schedule: "* * * * *",
			earliest: "2026-01-01 10:00:00", now: "2026-01-01 11:40:00",
			wantLatest: "2026-01-01 11:40:00", wantPassed: 99, wantNext: "2026-01-01 11:41:00",
		},
		{
			name: "a year down, every minute", schedule: "* * * * *",
			earliest: "2025-01-01 10:00:00", now: "2026-01-01 10:00:30",
			wantLatest: "2026-01-01 10:00:00", wantPassed: maxWalk, wantMany: true, wantNext: "2026-01-01 10:01:00",
		},
		{
			name: "many down, irregular schedule, latest far back", schedule: "* 3 * * *",
			earliest: "2025-12-01 00:00:00", now: "2026-01-01 12:00:00",
			wantLatest: "2026-01-01 03:59:00", wantPassed: maxWalk, wantMany: true, wantNext: "2026-01-02 03:00:00",
		},
		{
			name: "two close times then a gap", schedule: "0,1 0 * * *",
			earliest: "2025-10-01 00:30:00", now: "2026-01-01 12:00:00",
			wantLatest: "2026-01-01 00:01:00", wantPassed: maxWalk, wantMany: true, wantNext: "2026-01-02 00:00:00",
		},
		{
			name: "@every keeps its series when many passed", schedule: "@every 7m",
			earliest: "2026-01-01 00:00:03", now: "2026-01-02 00:00:00",
			// 1440 minutes / 7 = 205 whole intervals: 205*7m = 23h55m.
			wantLatest: "2026-01-01 23:55:03", wantPassed: maxWalk, wantMany: true, wantNext: "2026-01-02 00:02:03",
		},
		{
			name: "@every, few passed: next in the series", schedule: "@every 7m",
			earliest: "2026-01-01 00:00:03", now: "2026-01-01 00:20:00",
			wantLatest: "2026-01-01 00:14:03", wantPassed: 1, wantNext: "2026-01-01 00:21:03",
		},
		{
			name: "clock went back: nothing before earliest", schedule: "* * * * *",
			earliest: "2026-01-01 10:05:00", now: "2026-01-01 10:00:30",
			wantNext: "2026-01-01 10:06:00",
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSchedule(tc.schedule)
			if err != nil {
				t.Fatal(err)
			}
			got := scheduledTimes(s, at(tc.earliest), at(tc.now))
			var want window
			if tc.wantLatest != "" {
				want.latest = at(tc.wantLatest)
			}
			want.passed, want.many, want.next = tc.wantPassed, tc.wantMany, at(tc.wantNext)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(window{})); diff != "" {
				t.Errorf("scheduledTimes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestScheduledTimesBounded: a clock off by decades costs little.
func TestScheduledTimesBounded(t *testing.T) {
	s, err := ParseSchedule("* * * * *")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	w := scheduledTimes(s, at("1980-01-01 00:00:00"), at("2026-06-01 12:00:30"))
	if !w.latest.Equal(at("2026-06-01 12:00:00")) || !w.many {
		t.Errorf("latest %s many %v, want 2026-06-01 12:00:00 and many", w.latest, w.many)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %s", d)
	}
}

func TestRunName(t *testing.T) {
	if got, want := RunName("cronworkflowrun-sample", time.Date(2021, 9, 8, 9, 30, 0, 0, time.UTC)), "cronworkflowrun-sample-1631093400"; got != want {
		t.Errorf("RunName = %q, want %q (the name in the platform's example)", got, want)
	}
}
