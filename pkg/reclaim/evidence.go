package reclaim

import (
	"fmt"
	"strings"
	"time"
)

// Source names where a piece of evidence comes from.
type Source string

// The evidence sources.
const (
	// SourceStart is the pod's start: starting or resuming a workload is
	// an act of its user.
	SourceStart Source = "start"
	// SourceRequests is the activity sidecar's last HTTP request.
	SourceRequests Source = "requests"
	// SourceSSH is the activity sidecar's SSH sessions.
	SourceSSH Source = "ssh"
	// SourceJupyter is Jupyter's API: its last activity and its kernels.
	SourceJupyter Source = "jupyter"
	// SourceGPU is the utilization of the pod's GPUs or NPUs in the node
	// agent's metrics.
	SourceGPU Source = "gpu"
)

// Evidence is what one source says about the activity of one pod.
type Evidence struct {
	// Source is where it comes from.
	Source Source
	// Pod is the pod it is about.
	Pod string
	// Err is why the source could not be read: the evidence is unknown,
	// never idle.
	Err error
	// Required sources must be known, and have watched for the whole
	// idle-after, for a workload to be Idle; the others only add activity.
	Required bool
	// Active is activity now: a busy kernel, an open SSH session, a GPU
	// above the threshold.
	Active bool
	// Last is the latest activity the source saw; zero when none.
	Last time.Time
	// Since is when the source began to watch: what it says covers
	// [Since, now].
	Since time.Time

	// Kernels and BusyKernels count Jupyter's kernels.
	Kernels, BusyKernels int
	// SSHSessions counts the open SSH sessions.
	SSHSessions int
	// Utilization is the highest utilization of the pod's devices now, and
	// WindowMax the highest since the GPU was last above the threshold (or
	// since it has been watched), in percent; Threshold is the namespace's.
	Utilization, WindowMax, Threshold float64
}

// known tells whether the source could be read.
func (e Evidence) known() bool { return e.Err == nil }

// latest is the time of the evidence's latest activity: now when active.
func (e Evidence) latest(now time.Time) time.Time {
	if e.Active {
		return now
	}
	return e.Last
}

// verdict is what the evidence of a workload says.
type verdict int

const (
	// undecided: no activity within idle-after, but a required source is
	// unknown or has not watched long enough to say so.
	undecided verdict = iota
	// active: some activity within idle-after.
	active
	// idle: no activity within idle-after, and every required source
	// watched for all of it.
	idle
)

func (v verdict) String() string {
	switch v {
	case active:
		return "active"
	case idle:
		return "idle"
	default:
		return "undecided"
	}
}

// startSlack is how long after its pod's start a source may begin to
// watch and still cover the pod's whole life: the sidecar and Jupyter
// start a little after the pod.
const startSlack = 2 * time.Minute

// decision is a verdict with the latest activity and, when undecided, why.
type decision struct {
	verdict verdict
	// last is the latest activity seen by a known source; zero when none.
	last time.Time
	// why says which required source could not decide.
	why string
	// sshSeen is when an SSH client was last seen: now while a session is
	// open; zero when never.
	sshSeen time.Time
}

// decide reads the evidence of a workload's pods at now. Activity within
// idleAfter from any known source makes it active. Otherwise it is idle
// only when every required source is known and watched since idleAfter
// ago, or since its pod's start: a source that could not be read or came
// up lately is no evidence of idleness.
func decide(now time.Time, idleAfter time.Duration, evidence []Evidence) decision {
	var d decision
	starts := map[string]time.Time{}
	knownAny := false
	for _, e := range evidence {
		if !e.known() {
			continue
		}
		knownAny = true
		l := e.latest(now)
		if l.After(d.last) {
			d.last = l
		}
		if e.Source == SourceSSH && l.After(d.sshSeen) {
			d.sshSeen = l
		}
		if e.Source == SourceStart {
			starts[e.Pod] = e.Since
		}
	}
	if !knownAny {
		d.why = "no source could be read"
		return d
	}
	if !d.last.IsZero() && now.Sub(d.last) < idleAfter {
		d.verdict = active
		return d
	}
	var why []string
	for _, e := range evidence {
		if !e.Required {
			continue
		}
		if !e.known() {
			why = append(why, fmt.Sprintf("%s unknown", sourceLabel(e.Source)))
			continue
		}
		start, ok := starts[e.Pod]
		coversLife := ok && !e.Since.After(start.Add(startSlack))
		if watched := now.Sub(e.Since); watched < idleAfter && !coversLife {
			why = append(why, fmt.Sprintf("%s watched for %s only", sourceLabel(e.Source), formatDuration(watched)))
		}
	}
	if len(why) > 0 {
		d.why = strings.Join(why, ", ")
		return d
	}
	d.verdict = idle
	return d
}

// sourceLabel names a source in messages.
func sourceLabel(s Source) string {
	switch s {
	case SourceRequests:
		return "requests"
	case SourceSSH:
		return "SSH"
	case SourceJupyter:
		return "Jupyter"
	case SourceGPU:
		return "GPU"
	default:
		return "pod start"
	}
}

// describe says what the evidence shows, for messages and events: "no
// request for 1h2m" (or "last request 5m ago" within idleAfter), "GPU at
// most 0% for 1h", "kernels idle".
func (e Evidence) describe(now time.Time, idleAfter time.Duration) string {
	if !e.known() {
		return fmt.Sprintf("%s unknown (%v)", sourceLabel(e.Source), e.Err)
	}
	ago := func(t time.Time) string { return formatDuration(now.Sub(t)) }
	switch e.Source {
	case SourceStart:
		return "started " + ago(e.Since) + " ago"
	case SourceRequests:
		switch {
		case e.Last.IsZero():
			return "no request for " + ago(e.Since) + " (since the sidecar started)"
		case now.Sub(e.Last) < idleAfter:
			return "last request " + ago(e.Last) + " ago"
		}
		return "no request for " + ago(e.Last)
	case SourceSSH:
		if e.SSHSessions > 0 {
			return fmt.Sprintf("%d SSH session(s) open", e.SSHSessions)
		}
		switch {
		case e.Last.IsZero():
			return "no SSH for " + ago(e.Since) + " (since the sidecar started)"
		case now.Sub(e.Last) < idleAfter:
			return "last SSH " + ago(e.Last) + " ago"
		}
		return "no SSH for " + ago(e.Last)
	case SourceJupyter:
		if e.BusyKernels > 0 {
			return fmt.Sprintf("%d of %d kernel(s) busy", e.BusyKernels, e.Kernels)
		}
		state := "kernels idle"
		if e.Kernels == 0 {
			state = "no kernels"
		}
		return fmt.Sprintf("%s, Jupyter last active %s ago", state, ago(e.Last))
	case SourceGPU:
		if e.Active {
			return fmt.Sprintf("GPU %g%% (above %g%%)", e.Utilization, e.Threshold)
		}
		from := e.Since
		if e.Last.After(from) {
			from = e.Last
		}
		return fmt.Sprintf("GPU at most %g%% for %s", e.WindowMax, ago(from))
	}
	return string(e.Source)
}

// Summary says what the evidence of a workload shows, pod by pod (named
// when there are several), each pod's sources in a fixed order. The pod's
// start is named only when it is within idleAfter, where it is what keeps
// the workload active.
func Summary(now time.Time, idleAfter time.Duration, evidence []Evidence) string {
	var pods []string
	seen := map[string]bool{}
	for _, e := range evidence {
		if !seen[e.Pod] {
			seen[e.Pod] = true
			pods = append(pods, e.Pod)
		}
	}
	order := []Source{SourceRequests, SourceSSH, SourceGPU, SourceJupyter, SourceStart}
	var parts []string
	for _, pod := range pods {
		for _, s := range order {
			for _, e := range evidence {
				if e.Pod != pod || e.Source != s {
					continue
				}
				if s == SourceStart && now.Sub(e.Since) >= idleAfter {
					continue
				}
				p := e.describe(now, idleAfter)
				if len(pods) > 1 {
					p = pod + ": " + p
				}
				parts = append(parts, p)
			}
		}
	}
	return strings.Join(parts, ", ")
}
