package reclaim

import (
	"errors"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	start := func(d time.Duration) Evidence {
		return Evidence{Source: SourceStart, Pod: "p", Last: ago(d), Since: ago(d)}
	}
	requests := func(since, last time.Duration) Evidence {
		e := Evidence{Source: SourceRequests, Pod: "p", Required: true, Since: ago(since)}
		if last > 0 {
			e.Last = ago(last)
		}
		return e
	}
	gpu := func(since time.Duration, busy bool) Evidence {
		return Evidence{Source: SourceGPU, Pod: "p", Required: true, Since: ago(since), Active: busy, Threshold: 5}
	}
	unknown := func(s Source, required bool) Evidence {
		return Evidence{Source: s, Pod: "p", Required: required, Err: errors.New("connection refused")}
	}
	testCases := []struct {
		name     string
		evidence []Evidence
		want     verdict
		wantLast time.Time
		wantWhy  string
	}{
		{
			name:     "a request within idle-after",
			evidence: []Evidence{start(5 * time.Hour), requests(5*time.Hour, 10*time.Minute)},
			want:     active, wantLast: ago(10 * time.Minute),
		},
		{
			name:     "no request for longer than idle-after",
			evidence: []Evidence{start(5 * time.Hour), requests(5*time.Hour, 62*time.Minute)},
			want:     idle, wantLast: ago(62 * time.Minute),
		},
		{
			name:     "a pod started 10m ago with no request is active: its start is",
			evidence: []Evidence{start(10 * time.Minute), requests(9*time.Minute, 0)},
			want:     active, wantLast: ago(10 * time.Minute),
		},
		{
			name:     "no request since the pod's start 2h ago: the sidecar watched its whole life",
			evidence: []Evidence{start(2 * time.Hour), requests(2*time.Hour-30*time.Second, 0)},
			want:     idle, wantLast: ago(2 * time.Hour),
		},
		{
			name:     "a busy GPU is activity whatever the requests",
			evidence: []Evidence{start(5 * time.Hour), requests(5*time.Hour, 3*time.Hour), gpu(3*time.Hour, true)},
			want:     active, wantLast: now,
		},
		{
			name:     "the sidecar unreachable: unknown, not idle",
			evidence: []Evidence{start(5 * time.Hour), unknown(SourceRequests, true)},
			want:     undecided, wantLast: ago(5 * time.Hour), wantWhy: "requests unknown",
		},
		{
			name:     "the node agent unreachable for a GPU pod: unknown, not idle",
			evidence: []Evidence{start(5 * time.Hour), requests(5*time.Hour, 3*time.Hour), unknown(SourceGPU, true)},
			want:     undecided, wantLast: ago(3 * time.Hour), wantWhy: "GPU unknown",
		},
		{
			name:     "a sidecar restarted 10m ago, long after the pod's start, has not watched long enough",
			evidence: []Evidence{start(5 * time.Hour), requests(10*time.Minute, 0)},
			want:     undecided, wantLast: ago(5 * time.Hour), wantWhy: "requests watched for 10m only",
		},
		{
			name:     "GPU watched for 20m only (the Keeper restarted)",
			evidence: []Evidence{start(5 * time.Hour), requests(5*time.Hour, 3*time.Hour), gpu(20*time.Minute, false)},
			want:     undecided, wantLast: ago(3 * time.Hour), wantWhy: "GPU watched for 20m only",
		},
		{
			name:     "Jupyter unknown is not required",
			evidence: []Evidence{start(5 * time.Hour), requests(5*time.Hour, 3*time.Hour), unknown(SourceJupyter, false)},
			want:     idle, wantLast: ago(3 * time.Hour),
		},
		{
			name: "a busy kernel is activity",
			evidence: []Evidence{start(5 * time.Hour), requests(5*time.Hour, 3*time.Hour),
				{Source: SourceJupyter, Pod: "p", Active: true, Last: ago(4 * time.Hour), Since: ago(5 * time.Hour), Kernels: 1, BusyKernels: 1}},
			want: active, wantLast: now,
		},
		{
			name:     "nothing known",
			evidence: []Evidence{unknown(SourceRequests, true)},
			want:     undecided, wantWhy: "no source could be read",
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(now, time.Hour, tc.evidence)
			if d.verdict != tc.want || !d.last.Equal(tc.wantLast) || d.why != tc.wantWhy {
				t.Errorf("decide = %v last %v why %q, want %v last %v why %q", d.verdict, d.last, d.why, tc.want, tc.wantLast, tc.wantWhy)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	testCases := []struct {
		name     string
		evidence []Evidence
		want     string
	}{
		{
			name: "an idle Jupyter notebook on a GPU",
			evidence: []Evidence{
				{Source: SourceStart, Pod: "nb-0", Last: ago(5 * time.Hour), Since: ago(5 * time.Hour)},
				{Source: SourceRequests, Pod: "nb-0", Last: ago(62 * time.Minute), Since: ago(5 * time.Hour)},
				{Source: SourceSSH, Pod: "nb-0", Since: ago(5 * time.Hour)},
				{Source: SourceJupyter, Pod: "nb-0", Last: ago(65 * time.Minute), Since: ago(5 * time.Hour), Kernels: 2},
				{Source: SourceGPU, Pod: "nb-0", Since: ago(time.Hour), WindowMax: 0, Threshold: 5},
			},
			want: "no request for 1h2m, no SSH for 5h (since the sidecar started), GPU at most 0% for 1h, kernels idle, Jupyter last active 1h5m ago",
		},
		{
			name: "active sources and a recent start",
			evidence: []Evidence{
				{Source: SourceStart, Pod: "nb-0", Last: ago(20 * time.Minute), Since: ago(20 * time.Minute)},
				{Source: SourceSSH, Pod: "nb-0", Active: true, SSHSessions: 2, Since: ago(20 * time.Minute)},
				{Source: SourceGPU, Pod: "nb-0", Active: true, Utilization: 87, Threshold: 5},
				{Source: SourceJupyter, Pod: "nb-0", Err: errors.New("GET http://x/api/status: 403 Forbidden")},
			},
			want: "2 SSH session(s) open, GPU 87% (above 5%), Jupyter unknown (GET http://x/api/status: 403 Forbidden), started 20m ago",
		},
		{
			name: "two pods are named",
			evidence: []Evidence{
				{Source: SourceRequests, Pod: "files", Last: ago(2 * time.Hour)},
				{Source: SourceRequests, Pod: "code", Last: ago(3 * time.Hour)},
			},
			want: "files: no request for 2h, code: no request for 3h",
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Summary(now, time.Hour, tc.evidence); got != tc.want {
				t.Errorf("Summary =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
