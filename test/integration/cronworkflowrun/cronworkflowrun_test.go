package cronworkflowrun

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/workflow/cron"
)

// TestCronWorkflowRun runs every CronWorkflowRun test against one control
// plane.
func TestCronWorkflowRun(t *testing.T) {
	e := startEnv(t)
	t.Run("EveryMinute", e.testEveryMinute)
	t.Run("RestartStartsTheLatestOnly", e.testRestartLatestOnly)
	t.Run("RestartFindsTheRunStarted", e.testRestartFindsRun)
	t.Run("StartingDeadline", e.testStartingDeadline)
	t.Run("Forbid", e.testForbid)
	t.Run("Replace", e.testReplace)
	t.Run("Suspend", e.testSuspend)
	t.Run("History", e.testHistory)
	t.Run("HistoryDefaults", e.testHistoryDefaults)
	t.Run("Conditions", e.testConditions)
}

const minute = time.Minute

// testEveryMinute: every minute for 10 simulated minutes, on time or a few
// seconds late, starts exactly 10 runs, each once, each named after its
// minute and made from the template.
func (e *env) testEveryMinute(t *testing.T) {
	const n = 10
	tt := e.newTest(t)
	w := tt.watchRuns()
	c := tt.newCron("every-minute", "* * * * *", nil)
	t1 := firstMinute(c)
	var want []string
	for i := range n {
		at := t1.Add(time.Duration(i) * minute)
		tt.clock.SetTime(at.Add(time.Duration(i%3) * time.Second))
		want = append(want, runOf(c.Name, at, ""))
		tt.settled(c.Name, at, want...)
	}
	// Short of the next minute nothing more starts: a reconcile forced by
	// a run's change proves the controller looked.
	tt.clock.SetTime(t1.Add(n*minute - time.Second))
	tt.setPhase(c.Name, t1, batchv1beta1.NodeSucceeded)
	tt.eventually("HasSuccessfulRun", func() (bool, string, error) {
		got, _ := condition(tt.cron(c.Name), batchv1beta1.CronHasSuccessfulRun)
		return got == "True/RunSucceeded", got, nil
	})
	if got := tt.runs(); len(got) != n {
		t.Errorf("%d runs after %d minutes, want %d: %v", len(got), n, n, got)
	}
	doubled, added, _, err := w.report()
	if err != nil {
		t.Fatal(err)
	}
	if added != n || len(doubled) > 0 {
		t.Errorf("the watch saw %d runs added, doubled %v; want %d, none doubled", added, doubled, n)
	}
	tt.eventually("a RunStarted event per run", func() (bool, string, error) {
		got := tt.eventReasons(c.Name)["RunStarted"]
		return got == n, fmt.Sprintf("%d", got), nil
	})

	run := &batchv1beta1.WorkflowRun{}
	if err := tt.c.Get(tt.ctx, client.ObjectKey{Namespace: tt.ns, Name: cron.RunName(c.Name, t1)}, run); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"team": "vision", batchv1beta1.CronWorkflowRunLabel: c.Name}, run.Labels); diff != "" {
		t.Errorf("run labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"note": "by cron"}, run.Annotations); diff != "" {
		t.Errorf("run annotations (-want +got):\n%s", diff)
	}
	if run.Spec.WorkflowTemplateRef != "train" {
		t.Errorf("run spec %+v, want the template's", run.Spec)
	}
	if owner := metav1.GetControllerOf(run); owner == nil || owner.UID != c.UID {
		t.Errorf("run controller %+v, want the CronWorkflowRun", owner)
	}
	active := tt.cron(c.Name).Status.Active
	if len(active) != n-1 || active[0].Name != cron.RunName(c.Name, t1.Add(minute)) ||
		active[0].Kind != "WorkflowRun" || active[0].APIVersion != batchv1beta1.GroupVersion.String() || active[0].UID == "" {
		t.Errorf("status.active %+v, want the %d runs not finished, oldest first", active, n-1)
	}
}

// testRestartLatestOnly: a controller down for five scheduled times starts
// only the latest of them when it comes back (no starting deadline), says
// so in an event, and goes on.
func (e *env) testRestartLatestOnly(t *testing.T) {
	tt := e.newTest(t)
	w := tt.watchRuns()
	c := tt.newCron("restart", "* * * * *", nil)
	t1 := firstMinute(c)
	tt.clock.SetTime(t1)
	tt.settled(c.Name, t1, runOf(c.Name, t1, ""))

	tt.stop()
	tt.clock.SetTime(t1.Add(5*minute + 20*time.Second))
	tt.start()
	t6 := t1.Add(5 * minute)
	tt.settled(c.Name, t6, runOf(c.Name, t1, ""), runOf(c.Name, t6, ""))
	tt.waitEvent(c.Name, "MissedSchedule", "4 scheduled times before "+t6.UTC().Format(time.RFC3339))

	t7 := t6.Add(minute)
	tt.clock.SetTime(t7)
	tt.settled(c.Name, t7, runOf(c.Name, t1, ""), runOf(c.Name, t6, ""), runOf(c.Name, t7, ""))
	doubled, added, _, err := w.report()
	if err != nil || added != 3 || len(doubled) > 0 {
		t.Errorf("the watch saw %d runs added, doubled %v (%v); want 3, none doubled", added, doubled, err)
	}
}

// testRestartFindsRun: a controller that created a run and stopped before
// recording it in the status finds that run when it comes back, rather
// than start the time again.
func (e *env) testRestartFindsRun(t *testing.T) {
	tt := e.newTest(t)
	w := tt.watchRuns()
	c := tt.newCron("found", "* * * * *", nil)
	t1 := firstMinute(c)
	tt.clock.SetTime(t1)
	tt.settled(c.Name, t1, runOf(c.Name, t1, ""))

	tt.stop()
	t2 := t1.Add(minute)
	// What the controller had created for t2 before it stopped.
	run := &batchv1beta1.WorkflowRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: tt.ns, Name: cron.RunName(c.Name, t2),
			Labels: map[string]string{batchv1beta1.CronWorkflowRunLabel: c.Name, "team": "vision"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: batchv1beta1.GroupVersion.String(), Kind: "CronWorkflowRun", Name: c.Name, UID: c.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: batchv1beta1.WorkflowRunSpec{WorkflowTemplateRef: "train"},
	}
	if err := tt.c.Create(tt.ctx, run); err != nil {
		t.Fatal(err)
	}
	tt.clock.SetTime(t2.Add(10 * time.Second))
	tt.start()
	tt.settled(c.Name, t2, runOf(c.Name, t1, ""), runOf(c.Name, t2, ""))
	tt.eventually("the found run in status.active", func() (bool, string, error) {
		var names []string
		for _, ref := range tt.cron(c.Name).Status.Active {
			names = append(names, ref.Name)
		}
		return cmp.Equal(names, []string{run.Name, cron.RunName(c.Name, t1)}) || cmp.Equal(names, []string{cron.RunName(c.Name, t1), run.Name}),
			fmt.Sprint(names), nil
	})
	if got, _ := condition(tt.cron(c.Name), batchv1beta1.CronHasFailedRun); got != "False/NoRunFailed" {
		t.Errorf("HasFailedRun %s, want False/NoRunFailed: the run found is the CronWorkflowRun's own", got)
	}
	doubled, added, _, err := w.report()
	if err != nil || added != 2 || len(doubled) > 0 {
		t.Errorf("the watch saw %d runs added, doubled %v (%v); want 2, none doubled", added, doubled, err)
	}
}

// testStartingDeadline: after a restart, startingDeadlineSeconds decides:
// a time 20 s late of a 30 s deadline is started, one 45 s late is missed
// (HasFailedRun, an event) and not started later, and the schedule goes
// on.
func (e *env) testStartingDeadline(t *testing.T) {
	tt := e.newTest(t)
	c := tt.newCron("deadline", "* * * * *", func(c *batchv1beta1.CronWorkflowRun) {
		c.Spec.StartingDeadlineSeconds = ptr.To[int64](30)
	})
	t1 := firstMinute(c)
	t2, t3, t4 := t1.Add(minute), t1.Add(2*minute), t1.Add(3*minute)
	tt.clock.SetTime(t1.Add(5 * time.Second))
	tt.settled(c.Name, t1, runOf(c.Name, t1, ""))

	tt.stop()
	tt.clock.SetTime(t2.Add(20 * time.Second))
	tt.start()
	tt.settled(c.Name, t2, runOf(c.Name, t1, ""), runOf(c.Name, t2, ""))

	tt.stop()
	tt.clock.SetTime(t3.Add(45 * time.Second))
	tt.start()
	tt.settled(c.Name, t3, runOf(c.Name, t1, ""), runOf(c.Name, t2, ""))
	if got, _ := condition(tt.cron(c.Name), batchv1beta1.CronHasFailedRun); got != "True/MissedSchedule" {
		t.Errorf("HasFailedRun %s, want True/MissedSchedule", got)
	}
	tt.waitEvent(c.Name, "MissedSchedule", "Missed the run of "+t3.UTC().Format(time.RFC3339))

	tt.clock.SetTime(t4)
	tt.settled(c.Name, t4, runOf(c.Name, t1, ""), runOf(c.Name, t2, ""), runOf(c.Name, t4, ""))
}

// testForbid: with concurrencyPolicy Forbid no two runs ever run at once;
// a time due while a run runs is skipped, with an event, and not started
// when the run ends.
func (e *env) testForbid(t *testing.T) {
	tt := e.newTest(t)
	w := tt.watchRuns()
	c := tt.newCron("forbid", "* * * * *", func(c *batchv1beta1.CronWorkflowRun) {
		c.Spec.ConcurrencyPolicy = batchv1beta1.ForbidConcurrent
	})
	t1 := firstMinute(c)
	at := func(i int) time.Time { return t1.Add(time.Duration(i-1) * minute) }
	run := func(i int, phase batchv1beta1.NodePhase) string { return runOf(c.Name, at(i), phase) }

	tt.clock.SetTime(at(1))
	tt.settled(c.Name, at(1), run(1, ""))
	tt.setPhase(c.Name, at(1), batchv1beta1.NodeRunning)
	tt.clock.SetTime(at(2))
	tt.settled(c.Name, at(2), run(1, "Running"))
	tt.waitEvent(c.Name, "RunSkipped", "Skipped the run of "+at(2).UTC().Format(time.RFC3339))

	tt.clock.SetTime(at(2).Add(30 * time.Second))
	tt.setPhase(c.Name, at(1), batchv1beta1.NodeSucceeded)
	tt.eventually("IsRunning False", func() (bool, string, error) {
		got, _ := condition(tt.cron(c.Name), batchv1beta1.CronIsRunning)
		return got == "False/NoRunsActive", got, nil
	})
	if got := tt.runs(); !cmp.Equal(got, []string{run(1, "Succeeded")}) {
		t.Errorf("runs %v once the run ended: the skipped time must not start late", got)
	}

	tt.clock.SetTime(at(3))
	tt.settled(c.Name, at(3), run(1, "Succeeded"), run(3, ""))
	tt.setPhase(c.Name, at(3), batchv1beta1.NodeRunning)
	tt.clock.SetTime(at(4))
	tt.settled(c.Name, at(4), run(1, "Succeeded"), run(3, "Running"))
	tt.setPhase(c.Name, at(3), batchv1beta1.NodeFailed)
	tt.clock.SetTime(at(5))
	tt.settled(c.Name, at(5), run(1, "Succeeded"), run(3, "Failed"), run(5, ""))

	doubled, added, maxActive, err := w.report()
	if err != nil || added != 3 || len(doubled) > 0 || maxActive != 1 {
		t.Errorf("the watch saw %d runs added, doubled %v, at most %d running at once (%v); want 3, none, 1", added, doubled, maxActive, err)
	}
	if got := tt.eventReasons(c.Name)["RunSkipped"]; got != 2 {
		t.Errorf("%d RunSkipped events, want 2", got)
	}
}

// testReplace: with concurrencyPolicy Replace the running run is deleted
// when the next is due, and the next started.
func (e *env) testReplace(t *testing.T) {
	tt := e.newTest(t)
	c := tt.newCron("replace", "* * * * *", func(c *batchv1beta1.CronWorkflowRun) {
		c.Spec.ConcurrencyPolicy = batchv1beta1.ReplaceConcurrent
	})
	t1 := firstMinute(c)
	t2 := t1.Add(minute)
	tt.clock.SetTime(t1)
	tt.settled(c.Name, t1, runOf(c.Name, t1, ""))
	tt.setPhase(c.Name, t1, batchv1beta1.NodeRunning)

	tt.clock.SetTime(t2)
	tt.settled(c.Name, t2, runOf(c.Name, t2, ""))
	tt.waitEvent(c.Name, "RunReplaced", "Deleted WorkflowRun "+cron.RunName(c.Name, t1))
	tt.eventually("status.active is the new run", func() (bool, string, error) {
		active := tt.cron(c.Name).Status.Active
		return len(active) == 1 && active[0].Name == cron.RunName(c.Name, t2), fmt.Sprint(active), nil
	})

	// A finished run is not replaced: it stays.
	tt.setPhase(c.Name, t2, batchv1beta1.NodeSucceeded)
	t3 := t2.Add(minute)
	tt.clock.SetTime(t3)
	tt.settled(c.Name, t3, runOf(c.Name, t2, "Succeeded"), runOf(c.Name, t3, ""))
}

// testSuspend: a suspended CronWorkflowRun starts nothing while its running
// run goes on; resumed, it starts the latest time that passed meanwhile
// (no starting deadline) and none before it.
func (e *env) testSuspend(t *testing.T) {
	tt := e.newTest(t)
	c := tt.newCron("suspend", "* * * * *", nil)
	t1 := firstMinute(c)
	tt.clock.SetTime(t1)
	tt.settled(c.Name, t1, runOf(c.Name, t1, ""))

	tt.update(c.Name, func(c *batchv1beta1.CronWorkflowRun) { c.Spec.Suspend = true })
	tt.clock.SetTime(t1.Add(2*minute + 5*time.Second))
	// The run's change makes the controller look at the CronWorkflowRun
	// while two times are due and it is suspended.
	tt.setPhase(c.Name, t1, batchv1beta1.NodeRunning)
	tt.clock.SetTime(t1.Add(2*minute + 10*time.Second))
	tt.setPhase(c.Name, t1, batchv1beta1.NodeSucceeded)
	tt.eventually("IsRunning False", func() (bool, string, error) {
		got, _ := condition(tt.cron(c.Name), batchv1beta1.CronIsRunning)
		return got == "False/NoRunsActive", got, nil
	})
	if got := tt.runs(); !cmp.Equal(got, []string{runOf(c.Name, t1, "Succeeded")}) {
		t.Errorf("runs %v while suspended, want the first only, left to finish", got)
	}
	if last := tt.cron(c.Name).Status.LastScheduleTime; last == nil || !last.Equal(&metav1.Time{Time: t1}) {
		t.Errorf("lastScheduleTime %v while suspended, want %s", last, t1)
	}

	tt.update(c.Name, func(c *batchv1beta1.CronWorkflowRun) { c.Spec.Suspend = false })
	t3 := t1.Add(2 * minute)
	tt.settled(c.Name, t3, runOf(c.Name, t1, "Succeeded"), runOf(c.Name, t3, ""))
	t4 := t3.Add(minute)
	tt.clock.SetTime(t4)
	tt.settled(c.Name, t4, runOf(c.Name, t1, "Succeeded"), runOf(c.Name, t3, ""), runOf(c.Name, t4, ""))
}

// testHistory: finished runs beyond successfulRunsHistoryLimit and
// failedRunsHistoryLimit are deleted, oldest first, and never come back;
// running ones are kept.
func (e *env) testHistory(t *testing.T) {
	tt := e.newTest(t)
	w := tt.watchRuns()
	c := tt.newCron("history", "* * * * *", func(c *batchv1beta1.CronWorkflowRun) {
		c.Spec.SuccessfulRunsHistoryLimit, c.Spec.FailedRunsHistoryLimit = ptr.To[int32](2), ptr.To[int32](1)
	})
	t1 := firstMinute(c)
	at := func(i int) time.Time { return t1.Add(time.Duration(i-1) * minute) }
	phases := []batchv1beta1.NodePhase{
		batchv1beta1.NodeSucceeded, batchv1beta1.NodeFailed, batchv1beta1.NodeSucceeded,
		batchv1beta1.NodeError, batchv1beta1.NodeSucceeded, batchv1beta1.NodeFailed, batchv1beta1.NodeRunning,
	}
	for i, phase := range phases {
		tt.clock.SetTime(at(i + 1))
		tt.eventually(fmt.Sprintf("run %d started", i+1), func() (bool, string, error) {
			last := tt.cron(c.Name).Status.LastScheduleTime
			return last != nil && last.Equal(&metav1.Time{Time: at(i + 1)}), fmt.Sprint(tt.runs()), nil
		})
		tt.setPhase(c.Name, at(i+1), phase)
	}
	want := []string{runOf(c.Name, at(3), "Succeeded"), runOf(c.Name, at(5), "Succeeded"), runOf(c.Name, at(6), "Failed"), runOf(c.Name, at(7), "Running")}
	tt.eventually("the history within its limits", func() (bool, string, error) {
		got := tt.runs()
		return cmp.Equal(got, want), fmt.Sprint(got), nil
	})
	tt.eventually("a RunDeleted event per deleted run", func() (bool, string, error) {
		got := tt.eventReasons(c.Name)["RunDeleted"]
		return got == 3, fmt.Sprint(got), nil
	})
	// The next time neither brings a deleted run back nor deletes one kept.
	tt.clock.SetTime(at(8))
	tt.settled(c.Name, at(8), append(want, runOf(c.Name, at(8), ""))...)
	doubled, added, _, err := w.report()
	if err != nil || added != 8 || len(doubled) > 0 {
		t.Errorf("the watch saw %d runs added, doubled %v (%v); want 8, none doubled", added, doubled, err)
	}
}

// testHistoryDefaults: a CronWorkflowRun that sets no history limits gets
// CronJob's, 3 succeeded and 1 failed, and its runs beyond them are deleted.
func (e *env) testHistoryDefaults(t *testing.T) {
	tt := e.newTest(t)
	c := tt.newCron("history-defaults", "* * * * *", nil)
	if got := c.Spec; ptr.Deref(got.SuccessfulRunsHistoryLimit, -1) != 3 || ptr.Deref(got.FailedRunsHistoryLimit, -1) != 1 {
		t.Errorf("stored limits %v and %v, want 3 and 1", ptr.Deref(got.SuccessfulRunsHistoryLimit, -1), ptr.Deref(got.FailedRunsHistoryLimit, -1))
	}
	t1 := firstMinute(c)
	at := func(i int) time.Time { return t1.Add(time.Duration(i-1) * minute) }
	phases := []batchv1beta1.NodePhase{
		batchv1beta1.NodeSucceeded, batchv1beta1.NodeFailed, batchv1beta1.NodeSucceeded,
		batchv1beta1.NodeSucceeded, batchv1beta1.NodeSucceeded, batchv1beta1.NodeError,
	}
	for i, phase := range phases {
		tt.clock.SetTime(at(i + 1))
		tt.eventually(fmt.Sprintf("run %d started", i+1), func() (bool, string, error) {
			last := tt.cron(c.Name).Status.LastScheduleTime
			return last != nil && last.Equal(&metav1.Time{Time: at(i + 1)}), fmt.Sprint(tt.runs()), nil
		})
		tt.setPhase(c.Name, at(i+1), phase)
	}
	want := []string{runOf(c.Name, at(3), "Succeeded"), runOf(c.Name, at(4), "Succeeded"), runOf(c.Name, at(5), "Succeeded"), runOf(c.Name, at(6), "Error")}
	tt.eventually("the history within the default limits", func() (bool, string, error) {
		got := tt.runs()
		return cmp.Equal(got, want), fmt.Sprint(got), nil
	})
}

// testConditions: HasStarted, IsRunning, HasSuccessfulRun and HasFailedRun
// follow the runs, with lastTransitionTime (by the controller's clock)
// moving only when a status changes.
func (e *env) testConditions(t *testing.T) {
	tt := e.newTest(t)
	c := tt.newCron("conditions", "* * * * *", nil)
	t1 := firstMinute(c)
	t2 := t1.Add(minute)
	type want struct {
		status string
		since  time.Time
	}
	expect := func(what string, wants map[batchv1beta1.CronWorkflowRunConditionType]want) {
		t.Helper()
		tt.eventually(what, func() (bool, string, error) {
			got := tt.cron(c.Name)
			ok := len(got.Status.Conditions) == 4
			var seen []string
			for typ, w := range wants {
				status, since := condition(got, typ)
				seen = append(seen, fmt.Sprintf("%s=%s@%s", typ, status, since.UTC().Format(time.TimeOnly)))
				ok = ok && status == w.status && (w.since.IsZero() || since.Equal(w.since))
			}
			return ok, fmt.Sprint(seen), nil
		})
	}
	expect("all False at creation", map[batchv1beta1.CronWorkflowRunConditionType]want{
		batchv1beta1.CronHasStarted: {status: "False/NoRunStarted"}, batchv1beta1.CronIsRunning: {status: "False/NoRunsActive"},
		batchv1beta1.CronHasSuccessfulRun: {status: "False/NoRunSucceeded"}, batchv1beta1.CronHasFailedRun: {status: "False/NoRunFailed"},
	})
	falseSince := tt.cron(c.Name).Status.Conditions[2].LastTransitionTime.Time

	tt.clock.SetTime(t1)
	expect("started", map[batchv1beta1.CronWorkflowRunConditionType]want{
		batchv1beta1.CronHasStarted: {"True/RunStarted", t1}, batchv1beta1.CronIsRunning: {"True/RunsActive", t1},
		batchv1beta1.CronHasSuccessfulRun: {"False/NoRunSucceeded", falseSince}, batchv1beta1.CronHasFailedRun: {"False/NoRunFailed", falseSince},
	})
	tt.clock.SetTime(t1.Add(20 * time.Second))
	tt.setPhase(c.Name, t1, batchv1beta1.NodeSucceeded)
	expect("succeeded", map[batchv1beta1.CronWorkflowRunConditionType]want{
		batchv1beta1.CronHasStarted: {"True/RunStarted", t1}, batchv1beta1.CronIsRunning: {"False/NoRunsActive", t1.Add(20 * time.Second)},
		batchv1beta1.CronHasSuccessfulRun: {"True/RunSucceeded", t1.Add(20 * time.Second)}, batchv1beta1.CronHasFailedRun: {"False/NoRunFailed", falseSince},
	})
	tt.clock.SetTime(t2)
	expect("the second started", map[batchv1beta1.CronWorkflowRunConditionType]want{
		batchv1beta1.CronHasStarted: {"True/RunStarted", t1}, batchv1beta1.CronIsRunning: {"True/RunsActive", t2},
		batchv1beta1.CronHasSuccessfulRun: {"True/RunSucceeded", t1.Add(20 * time.Second)}, batchv1beta1.CronHasFailedRun: {"False/NoRunFailed", falseSince},
	})
	tt.clock.SetTime(t2.Add(30 * time.Second))
	tt.setPhase(c.Name, t2, batchv1beta1.NodeError)
	expect("the second failed", map[batchv1beta1.CronWorkflowRunConditionType]want{
		batchv1beta1.CronHasStarted: {"True/RunStarted", t1}, batchv1beta1.CronIsRunning: {"False/NoRunsActive", t2.Add(30 * time.Second)},
		batchv1beta1.CronHasSuccessfulRun: {"True/RunSucceeded", t1.Add(20 * time.Second)}, batchv1beta1.CronHasFailedRun: {"True/RunFailed", t2.Add(30 * time.Second)},
	})
	if active := tt.cron(c.Name).Status.Active; len(active) != 0 {
		t.Errorf("status.active %v, want none", active)
	}
}
