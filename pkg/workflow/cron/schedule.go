package cron

import (
	"errors"
	"fmt"
	"strings"
	"time"

	robfigcron "github.com/robfig/cron/v3"
)

// parser reads the five standard fields (minute, hour, day of month, month,
// day of week) and descriptors such as @hourly and @every 2h.
var parser = robfigcron.NewParser(robfigcron.Minute | robfigcron.Hour | robfigcron.Dom |
	robfigcron.Month | robfigcron.Dow | robfigcron.Descriptor)

// MinEvery is the shortest interval of an @every schedule: the standard
// fields cannot say anything more frequent than once a minute either.
const MinEvery = time.Minute

// ParseSchedule parses a CronWorkflowRun's spec.schedule: five cron fields
// or a descriptor (@yearly, @monthly, @weekly, @daily, @hourly, @every
// DURATION of at least MinEvery), evaluated in the controller's time zone.
// It refuses a TZ= or CRON_TZ= prefix (the API has no time zone; the
// parser it wraps would also panic on one without a schedule after it) and
// a schedule that matches no time, such as "0 0 30 2 *". The error reads
// as the detail of a field error on spec.schedule.
func ParseSchedule(s string) (robfigcron.Schedule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty schedule")
	}
	if strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ=") {
		return nil, errors.New("a time zone (TZ= or CRON_TZ=) is not supported: schedules are in the controller's time zone")
	}
	sched, err := parser.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("not a cron schedule (five fields: minute hour day-of-month month day-of-week, or a descriptor such as @hourly): %w", err)
	}
	if every, ok := sched.(robfigcron.ConstantDelaySchedule); ok && every.Delay < MinEvery {
		return nil, fmt.Errorf("@every %s is more frequent than once every %s", every.Delay, MinEvery)
	}
	if sched.Next(time.Now()).IsZero() {
		return nil, errors.New("the schedule matches no time")
	}
	return sched, nil
}

// maxWalk is how many scheduled times scheduledTimes steps through one by
// one, as Kubernetes' CronJob controller bounds it, before it looks for
// the latest from now backwards instead: a controller down for long, or a
// clock off by years, must not cost a loop over every time in between.
const maxWalk = 100

// window is what a schedule says about the times between the last one
// considered (exclusive) and now (inclusive).
type window struct {
	// latest is the most recent scheduled time in the window; zero when
	// none is due.
	latest time.Time
	// passed counts the scheduled times in the window before latest, which
	// are not started; with many set there were more than maxWalk and
	// passed is a lower bound.
	passed int
	many   bool
	// next is the first scheduled time after now (and after the window's
	// start) in the series of times from the window's start; zero when the
	// schedule matches no later time.
	next time.Time
}

// scheduledTimes finds the scheduled times of s after earliest and up to
// now, in the controller's time zone.
func scheduledTimes(s robfigcron.Schedule, earliest, now time.Time) window {
	earliest, now = earliest.Local(), now.Local()
	var w window
	t := s.Next(earliest)
	for i := 0; !t.IsZero() && !t.After(now); i++ {
		if i == maxWalk {
			w.many = true
			w.passed = i
			w.latest = latestUpTo(s, w.latest, now)
			w.next = s.Next(w.latest)
			return w
		}
		if !w.latest.IsZero() {
			w.passed++
		}
		w.latest = t
		t = s.Next(t)
	}
	// Next of the latest rather than of now: an @every schedule keeps its
	// series.
	w.next = t
	return w
}

// latestUpTo returns the most recent scheduled time of s up to now, given
// a scheduled time after that is not after now. It looks back from now
// over a window that doubles until it holds a scheduled time, then steps
// forward through that window, which holds few: its later half held none.
func latestUpTo(s robfigcron.Schedule, after, now time.Time) time.Time {
	if every, ok := s.(robfigcron.ConstantDelaySchedule); ok {
		// Keep to the series that started at after.
		return after.Add(now.Sub(after) / every.Delay * every.Delay)
	}
	for back := time.Minute; ; back *= 2 {
		from := now.Add(-back)
		if !from.After(after) || back <= 0 {
			from = after
		}
		t := s.Next(from)
		if !t.IsZero() && !t.After(now) {
			for {
				n := s.Next(t)
				if n.IsZero() || n.After(now) {
					return t
				}
				t = n
			}
		}
		if from.Equal(after) {
			return after
		}
	}
}

// RunName is the name of the run of a CronWorkflowRun for the scheduled
// time t: the CronWorkflowRun's name and t in Unix seconds. The same time
// gives the same name, so a run is never started twice for one time.
func RunName(cronName string, t time.Time) string {
	return fmt.Sprintf("%s-%d", cronName, t.Unix())
}
