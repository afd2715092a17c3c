package cronworkflowrun

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/workflow/cron"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// wait bounds each wait for the controller to act on a step of the clock.
const wait = 30 * time.Second

// env is the control plane the tests share.
type env struct {
	cp *harness.ControlPlane
	// c reads and writes straight through the API server.
	c client.WithWatch
}

var nsCounter atomic.Int32

func startEnv(t *testing.T) *env {
	t.Helper()
	// The informers log through controller-runtime's global logger.
	ctrl.SetLogger(logr.Discard())
	cp := harness.StartControlPlane(t)
	c, err := client.NewWithWatch(cp.Config, client.Options{Scheme: cp.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &env{cp: cp, c: c}
}

// test is one test's namespace, fake clock and controller.
type test struct {
	*env
	t     *testing.T
	ctx   context.Context
	ns    string
	clock *clocktesting.FakeClock
	ctrl  *controller
}

// newTest makes a namespace and a fake clock at the start of the current
// minute, before the creation of anything the test creates, and starts the
// controller.
func (e *env) newTest(t *testing.T) *test {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	ns := fmt.Sprintf("cron-%d", nsCounter.Add(1))
	if err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	tt := &test{env: e, t: t, ctx: ctx, ns: ns, clock: clocktesting.NewFakeClock(time.Now().Truncate(time.Minute))}
	tt.start()
	return tt
}

// controller is a running manager with the CronWorkflowRun controller.
type controller struct {
	cancel context.CancelFunc
	done   chan error
}

// logCapture keeps the controller's log up to V(5), without the client's
// request and response bodies, for a failed test to show.
type logCapture struct {
	mu    sync.Mutex
	lines []string
}

func (l *logCapture) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 5})
}

// last returns the last n lines.
func (l *logCapture) last(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines[max(0, len(l.lines)-n):], "\n")
}

// start starts the controller on a manager of its own whose cache holds
// the test's namespace only, telling time by the test's clock.
func (tt *test) start() {
	t := tt.t
	t.Helper()
	if tt.ctrl != nil {
		t.Fatal("the controller is running already")
	}
	capture := &logCapture{}
	mgr, err := ctrl.NewManager(tt.cp.Config, ctrl.Options{
		Scheme:                 tt.cp.Scheme,
		Logger:                 capture.logger(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{tt.ns: {}}},
		// Every test runs a controller of the same name in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	if err := cron.Setup(mgr, cron.Options{Clock: tt.clock}); err != nil {
		t.Fatalf("setting up the controller: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &controller{cancel: cancel, done: make(chan error, 1)}
	go func() { c.done <- mgr.Start(ctx) }()
	syncCtx, syncCancel := context.WithTimeout(tt.ctx, wait)
	defer syncCancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		cancel()
		t.Fatalf("the manager's cache did not sync: %v", <-c.done)
	}
	tt.ctrl = c
	t.Cleanup(func() {
		if tt.ctrl == c {
			tt.stop()
		}
		if t.Failed() {
			t.Logf("controller log (last lines):\n%s", capture.last(80))
		}
	})
}

// stop stops the controller and waits until it has.
func (tt *test) stop() {
	tt.t.Helper()
	c := tt.ctrl
	if c == nil {
		tt.t.Fatal("the controller is not running")
	}
	tt.ctrl = nil
	c.cancel()
	select {
	case err := <-c.done:
		if err != nil {
			tt.t.Errorf("manager stopped with error: %v", err)
		}
	case <-time.After(wait):
		tt.t.Fatal("the manager did not stop")
	}
}

// eventually polls cond until it holds.
func (tt *test) eventually(what string, cond func() (bool, string, error)) {
	tt.t.Helper()
	testutil.Eventually(tt.ctx, tt.t, wait, what, cond)
}

// newCron is a CronWorkflowRun of the schedule running template "train".
func (tt *test) newCron(name, schedule string, edit func(*batchv1beta1.CronWorkflowRun)) *batchv1beta1.CronWorkflowRun {
	tt.t.Helper()
	c := &batchv1beta1.CronWorkflowRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: tt.ns, Name: name},
		Spec: batchv1beta1.CronWorkflowRunSpec{
			Schedule: schedule,
			WorkflowRun: batchv1beta1.WorkflowRunTemplateSpec{
				Metadata: metav1.ObjectMeta{Labels: map[string]string{"team": "vision"}, Annotations: map[string]string{"note": "by cron"}},
				Spec:     batchv1beta1.WorkflowRunSpec{WorkflowTemplateRef: "train"},
			},
		},
	}
	if edit != nil {
		edit(c)
	}
	if errs := cron.Validate(c); len(errs) > 0 {
		tt.t.Fatalf("the test's CronWorkflowRun is invalid: %v", errs.ToAggregate())
	}
	if err := tt.c.Create(tt.ctx, c); err != nil {
		tt.t.Fatalf("creating CronWorkflowRun %s: %v", name, err)
	}
	return c
}

// firstMinute is the first whole minute after the CronWorkflowRun's
// creation: the first time of "* * * * *".
func firstMinute(c *batchv1beta1.CronWorkflowRun) time.Time {
	return c.CreationTimestamp.Truncate(time.Minute).Add(time.Minute)
}

// cron gets a CronWorkflowRun.
func (tt *test) cron(name string) *batchv1beta1.CronWorkflowRun {
	tt.t.Helper()
	c := &batchv1beta1.CronWorkflowRun{}
	if err := tt.c.Get(tt.ctx, client.ObjectKey{Namespace: tt.ns, Name: name}, c); err != nil {
		tt.t.Fatal(err)
	}
	return c
}

// update changes a CronWorkflowRun's spec.
func (tt *test) update(name string, edit func(*batchv1beta1.CronWorkflowRun)) {
	tt.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c := tt.cron(name)
		edit(c)
		return tt.c.Update(tt.ctx, c)
	})
	if err != nil {
		tt.t.Fatalf("updating CronWorkflowRun %s: %v", name, err)
	}
}

// runs lists the runs of the namespace, "name:phase" sorted by name.
func (tt *test) runs() []string {
	tt.t.Helper()
	var list batchv1beta1.WorkflowRunList
	if err := tt.c.List(tt.ctx, &list, client.InNamespace(tt.ns)); err != nil {
		tt.t.Fatal(err)
	}
	var out []string
	for _, r := range list.Items {
		out = append(out, r.Name+":"+string(r.Status.Phase))
	}
	sort.Strings(out)
	return out
}

// runOf is "name:phase" of the CronWorkflowRun's run for t.
func runOf(cronName string, t time.Time, phase batchv1beta1.NodePhase) string {
	return cron.RunName(cronName, t) + ":" + string(phase)
}

// setPhase writes a run's phase as its controller would.
func (tt *test) setPhase(cronName string, at time.Time, phase batchv1beta1.NodePhase) {
	tt.t.Helper()
	name := cron.RunName(cronName, at)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		r := &batchv1beta1.WorkflowRun{}
		if err := tt.c.Get(tt.ctx, client.ObjectKey{Namespace: tt.ns, Name: name}, r); err != nil {
			return err
		}
		r.Status.Phase = phase
		return tt.c.Status().Update(tt.ctx, r)
	})
	if err != nil {
		tt.t.Fatalf("setting run %s %s: %v", name, phase, err)
	}
}

// settled waits until the CronWorkflowRun has acted on the scheduled time
// at (its lastScheduleTime is at) and its runs are want.
func (tt *test) settled(cronName string, at time.Time, want ...string) {
	tt.t.Helper()
	sort.Strings(want)
	tt.eventually(fmt.Sprintf("%s acted on %s with runs %v", cronName, at.UTC().Format(time.TimeOnly), want), func() (bool, string, error) {
		c := tt.cron(cronName)
		got := tt.runs()
		last := "none"
		if c.Status.LastScheduleTime != nil {
			last = c.Status.LastScheduleTime.UTC().Format(time.TimeOnly)
		}
		ok := c.Status.LastScheduleTime != nil && c.Status.LastScheduleTime.Equal(&metav1.Time{Time: at}) && slices.Equal(got, want)
		return ok, fmt.Sprintf("lastScheduleTime %s, runs %v", last, got), nil
	})
}

// condition returns "Status/Reason" of a condition of the CronWorkflowRun
// and its lastTransitionTime.
func condition(c *batchv1beta1.CronWorkflowRun, typ batchv1beta1.CronWorkflowRunConditionType) (string, time.Time) {
	for _, cond := range c.Status.Conditions {
		if cond.Type == typ {
			return string(cond.Status) + "/" + cond.Reason, cond.LastTransitionTime.Time
		}
	}
	return "", time.Time{}
}

// waitEvent waits for an event of the reason about the CronWorkflowRun
// whose note contains substr, and returns the note.
func (tt *test) waitEvent(cronName, reason, substr string) string {
	tt.t.Helper()
	var note string
	tt.eventually(fmt.Sprintf("event %s %q", reason, substr), func() (bool, string, error) {
		var list eventsv1.EventList
		if err := tt.c.List(tt.ctx, &list, client.InNamespace(tt.ns)); err != nil {
			return false, "", err
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Name != cronName {
				continue
			}
			seen = append(seen, e.Reason+": "+e.Note)
			if e.Reason == reason && strings.Contains(e.Note, substr) {
				note = e.Note
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("events %q", seen), nil
	})
	return note
}

// eventReasons counts the events about the CronWorkflowRun by reason, one
// per event object (repeats of one are counted once).
func (tt *test) eventReasons(cronName string) map[string]int {
	tt.t.Helper()
	var list eventsv1.EventList
	if err := tt.c.List(tt.ctx, &list, client.InNamespace(tt.ns)); err != nil {
		tt.t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range list.Items {
		if e.Regarding.Name == cronName {
			out[e.Reason]++
		}
	}
	return out
}

// runWatch records every run the API server reports in a namespace: how
// often each name was added (a run deleted and started again counts
// twice), and the most runs running at once.
type runWatch struct {
	mu        sync.Mutex
	added     map[string]int
	running   map[string]bool
	maxActive int
	err       error
	stop      context.CancelFunc
	done      chan struct{}
}

// watchRuns starts a runWatch of the test's namespace, stopped when the
// test ends.
func (tt *test) watchRuns() *runWatch {
	tt.t.Helper()
	var list batchv1beta1.WorkflowRunList
	if err := tt.c.List(tt.ctx, &list, client.InNamespace(tt.ns)); err != nil {
		tt.t.Fatal(err)
	}
	if len(list.Items) > 0 {
		tt.t.Fatalf("runs exist before the watch: %d", len(list.Items))
	}
	ctx, cancel := context.WithCancel(tt.ctx)
	w := &runWatch{added: map[string]int{}, running: map[string]bool{}, stop: cancel, done: make(chan struct{})}
	go w.run(ctx, tt.c, tt.ns, list.ResourceVersion)
	tt.t.Cleanup(w.close)
	return w
}

func (w *runWatch) run(ctx context.Context, c client.WithWatch, ns, rv string) {
	defer close(w.done)
	for ctx.Err() == nil {
		wi, err := c.Watch(ctx, &batchv1beta1.WorkflowRunList{}, client.InNamespace(ns),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
		if err != nil {
			if ctx.Err() == nil {
				w.fail(fmt.Errorf("watching runs: %w", err))
			}
			return
		}
		for ev := range wi.ResultChan() {
			if ev.Type == watch.Error {
				w.fail(fmt.Errorf("watch error: %v", ev.Object))
				wi.Stop()
				return
			}
			r, ok := ev.Object.(*batchv1beta1.WorkflowRun)
			if !ok {
				continue
			}
			rv = r.ResourceVersion
			w.observe(ev.Type, r)
		}
		wi.Stop()
	}
}

func (w *runWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

func (w *runWatch) observe(typ watch.EventType, r *batchv1beta1.WorkflowRun) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch typ {
	case watch.Added:
		w.added[r.Name]++
	case watch.Bookmark:
		return
	}
	w.running[r.Name] = typ != watch.Deleted && !r.Status.Phase.Done() && r.DeletionTimestamp == nil
	n := 0
	for _, running := range w.running {
		if running {
			n++
		}
	}
	w.maxActive = max(w.maxActive, n)
}

func (w *runWatch) close() {
	w.stop()
	<-w.done
}

// report returns the names added more than once, the names added, and the
// most runs running at once seen so far.
func (w *runWatch) report() (doubled []string, added int, maxActive int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, n := range w.added {
		if n > 1 {
			doubled = append(doubled, fmt.Sprintf("%s (%d times)", name, n))
		}
	}
	sort.Strings(doubled)
	return doubled, len(w.added), w.maxActive, w.err
}
