package reclaim

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/accelstack/accelstack/api"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/reclaim/reclaimtest"
)

const (
	testNS  = "research"
	node    = "node-a"
	agentIP = "10.0.0.100"
)

// t0 is when every test starts.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// eventLog records the Keeper's events.
type eventLog struct {
	mu     sync.Mutex
	events []recorded
}

type recorded struct{ object, typ, reason, note string }

func (l *eventLog) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	name := ""
	if m, err := meta.Accessor(regarding); err == nil {
		name = m.GetName()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, recorded{object: name, typ: eventtype, reason: reason, note: fmt.Sprintf(note, args...)})
}

// of returns the events about an object, "Type Reason: note".
func (l *eventLog) of(name string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		if e.object == name {
			out = append(out, e.typ+" "+e.reason+": "+e.note)
		}
	}
	return out
}

// fixture is a fake API server with an opted-in namespace, a node agent on
// a simulated GPU machine, the pods' servers behind a fake network, and a
// Keeper on a fake clock.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	clock  *clocktesting.FakeClock
	c      client.Client
	events *eventLog
	net    *reclaimtest.Network
	agent  *reclaimtest.NodeAgent
	k      *Keeper
	ips    int
}

func newScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := api.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// newFixture makes the fixture; the namespace has annotations, and funcs,
// when set, intercept the client's calls.
func newFixture(t *testing.T, annotations map[string]string, funcs *interceptor.Funcs) *fixture {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(newScheme(t)).
		WithStatusSubresource(&tensorstackv1beta1.Notebook{}, &tensorstackv1beta1.TensorBoard{}, &tensorstackv1beta1.Explorer{})
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	f := &fixture{
		t: t, ctx: context.Background(), clock: clocktesting.NewFakeClock(t0), c: b.Build(),
		events: &eventLog{}, net: reclaimtest.NewNetwork(), agent: reclaimtest.StartNodeAgent(t),
	}
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNS,
		Labels: map[string]string{EnabledLabelKey: EnabledLabelValue}, Annotations: annotations}})
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DefaultNodeAgentNamespace}})
	f.create(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNodeAgentNamespace, Name: "node-agent-x1",
			Labels: map[string]string{"app.kubernetes.io/name": "node-agent"}},
		Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "node-agent"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: agentIP},
	})
	f.net.Route(agentIP, DefaultNodeAgentPort, f.agent.Addr())
	f.k = NewKeeper(f.c, f.c, f.events, Options{
		ProbePeriod: time.Minute, Clock: f.clock, HTTPClient: f.net.Client(2 * time.Second), Workers: 2,
	})
	return f
}

func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	if err := f.c.Create(f.ctx, obj); err != nil {
		f.t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// podSpec is a workload pod's: the activity sidecar and the server
// container, holding GPUs when gpus > 0.
func podSpec(container string, gpus int, env ...corev1.EnvVar) corev1.PodSpec {
	c := corev1.Container{Name: container, Env: env}
	if gpus > 0 {
		c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(int64(gpus), resource.DecimalSI)}
	}
	return corev1.PodSpec{NodeName: node, Containers: []corev1.Container{c, {Name: activity.ContainerName}}}
}

// runPod creates a pod running since now with a new IP, and the server the
// Keeper reaches at its sidecar's port, whose sidecar started now.
func (f *fixture) runPod(ns, name string, spec corev1.PodSpec) (*corev1.Pod, *reclaimtest.Pod) {
	f.t.Helper()
	f.ips++
	ip := fmt.Sprintf("10.1.0.%d", f.ips)
	now := metav1.NewTime(f.clock.Now())
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-uid")},
		Spec:       spec,
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, StartTime: &now},
	}
	f.create(p)
	srv := reclaimtest.NewPod(f.t, f.clock.Now(), f.clock.Now)
	f.net.Route(ip, activity.HTTPPort, srv.Addr())
	return p, srv
}

func podStatus(p *corev1.Pod) *tensorstackv1beta1.PodStatus {
	return &tensorstackv1beta1.PodStatus{Reference: tensorstackv1beta1.PodReference{Name: p.Name, UID: p.UID}, Phase: corev1.PodRunning}
}

// notebook creates a running Notebook of type typ in ns, its pod holding
// gpus GPUs, with Jupyter's API answering (idle kernels, last active now)
// unless typ is rstudio.
func (f *fixture) notebook(ns, name string, typ tensorstackv1beta1.NotebookType, gpus int, env ...corev1.EnvVar) (*tensorstackv1beta1.Notebook, *reclaimtest.Pod) {
	f.t.Helper()
	spec := podSpec(tensorstackv1beta1.NotebookContainer, gpus, env...)
	nb := &tensorstackv1beta1.Notebook{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-nb-uid")},
		Spec:       tensorstackv1beta1.NotebookSpec{Type: typ, Template: tensorstackv1beta1.NotebookTemplateSpec{Spec: spec}},
	}
	f.create(nb)
	p, srv := f.runPod(ns, name+"-0", spec)
	nb.Status.Pod = podStatus(p)
	nb.Status.Conditions = []tensorstackv1beta1.WorkloadCondition{{Type: tensorstackv1beta1.ConditionReady, Status: corev1.ConditionTrue,
		Reason: "PodReady", LastTransitionTime: metav1.NewTime(t0)}}
	if err := f.c.Status().Update(f.ctx, nb); err != nil {
		f.t.Fatal(err)
	}
	if typ != tensorstackv1beta1.NotebookRStudio {
		srv.SetJupyter(reclaimtest.JupyterStatus{Started: f.clock.Now(), LastActivity: f.clock.Now()},
			reclaimtest.JupyterKernel{ID: "k1", Name: "python3", LastActivity: f.clock.Now(), ExecutionState: "idle"})
	}
	return nb, srv
}

// probe runs one probe of everything.
func (f *fixture) probe() { f.k.ProbeAll(f.ctx) }

// advance steps the clock one probe period at a time for d, probing after
// each step, and calls each after each probe.
func (f *fixture) advance(d time.Duration, each func()) {
	for end := f.clock.Now().Add(d); f.clock.Now().Before(end); {
		f.clock.Step(time.Minute)
		f.probe()
		if each != nil {
			each()
		}
	}
}

// get reads obj afresh.
func (f *fixture) get(obj client.Object) {
	f.t.Helper()
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		f.t.Fatal(err)
	}
}

// idleOf returns the Idle condition of obj, read afresh.
func (f *fixture) idleOf(obj client.Object) *condition {
	f.t.Helper()
	f.get(obj)
	switch o := obj.(type) {
	case *tensorstackv1beta1.Notebook:
		return notebook{o}.idle()
	case *tensorstackv1beta1.TensorBoard:
		return tensorBoard{o}.idle()
	case *tensorstackv1beta1.Explorer:
		return explorer{o}.idle()
	}
	f.t.Fatalf("no Idle condition in a %T", obj)
	return nil
}

// wantIdle checks the Idle condition's status, reason and that its
// message contains each of parts.
func (f *fixture) wantIdle(obj client.Object, status corev1.ConditionStatus, reason string, parts ...string) *condition {
	f.t.Helper()
	c := f.idleOf(obj)
	if c == nil {
		f.t.Fatalf("%s has no Idle condition at %s", obj.GetName(), f.clock.Now().Sub(t0))
	}
	if c.Status != status || c.Reason != reason {
		f.t.Fatalf("%s: Idle %s/%s (%q) at %s, want %s/%s", obj.GetName(), c.Status, c.Reason, c.Message, f.clock.Now().Sub(t0), status, reason)
	}
	for _, p := range parts {
		if !strings.Contains(c.Message, p) {
			f.t.Errorf("%s: Idle message %q lacks %q", obj.GetName(), c.Message, p)
		}
	}
	if !c.LastProbeTime.Time.Equal(f.clock.Now()) {
		f.t.Errorf("%s: lastProbeTime %s, want now %s", obj.GetName(), c.LastProbeTime, f.clock.Now())
	}
	return c
}

func (f *fixture) wantEvents(name string, want ...string) {
	f.t.Helper()
	got := f.events.of(name)
	if len(got) != len(want) {
		f.t.Fatalf("events of %s: %q, want %d matching %q", name, got, len(want), want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			f.t.Errorf("event %d of %s: %q, want it to start with %q", i, name, got[i], want[i])
		}
	}
}

// TestKeeperIdleThenSuspended follows a Jupyter notebook nobody uses: active
// while its start is recent, Idle after 1h with the evidence, suspended
// after 24h Idle, and no longer probed once suspended.
func TestKeeperIdleThenSuspended(t *testing.T) {
	f := newFixture(t, nil, nil)
	nb, srv := f.notebook(testNS, "nb", tensorstackv1beta1.NotebookJupyter, 0,
		corev1.EnvVar{Name: "NB_PREFIX", Value: "/notebook/research/nb/"})

	f.probe()
	f.wantIdle(nb, corev1.ConditionFalse, ReasonActive, "started 0s ago")
	f.clock.Step(59 * time.Minute)
	f.probe()
	f.wantIdle(nb, corev1.ConditionFalse, ReasonActive, "started 59m ago")
	f.wantEvents("nb")

	f.clock.Step(2 * time.Minute)
	f.probe()
	becameIdle := f.wantIdle(nb, corev1.ConditionTrue, ReasonNoActivity,
		"No activity for 1h1m: no request for 1h1m (since the sidecar started), no SSH for 1h1m (since the sidecar started), kernels idle, Jupyter last active 1h1m ago")
	if !becameIdle.LastTransitionTime.Time.Equal(f.clock.Now()) {
		t.Errorf("lastTransitionTime %s, want now", becameIdle.LastTransitionTime)
	}
	f.wantEvents("nb", "Normal Idle: Idle, no activity for 1h1m (suspended after 24h Idle): no request for 1h1m")

	f.clock.Step(time.Hour)
	f.probe()
	c := f.wantIdle(nb, corev1.ConditionTrue, ReasonNoActivity, "Idle for 1h: no request for 2h1m")
	if !c.LastTransitionTime.Equal(&becameIdle.LastTransitionTime) {
		t.Errorf("lastTransitionTime moved from %s to %s without a change of status", becameIdle.LastTransitionTime, c.LastTransitionTime)
	}
	f.get(nb)
	if nb.Spec.Suspend {
		t.Fatal("suspended before suspend-after")
	}

	f.clock.Step(23 * time.Hour)
	f.probe()
	suspended := f.wantIdle(nb, corev1.ConditionTrue, ReasonSuspended, "Suspended after 24h Idle: no request for 25h1m")
	f.get(nb)
	if !nb.Spec.Suspend {
		t.Fatal("not suspended after 24h Idle")
	}
	f.wantEvents("nb", "Normal Idle:", "Normal Suspended: Suspended after 24h Idle: no request for 25h1m (since the sidecar started), no SSH for 25h1m")
	if r := nb.Status.Conditions[0]; r.Type != tensorstackv1beta1.ConditionReady || r.Status != corev1.ConditionTrue {
		t.Errorf("the Ready condition changed: %+v", nb.Status.Conditions)
	}

	// A suspended notebook is not probed.
	n := len(srv.Requests())
	f.clock.Step(time.Minute)
	f.probe()
	if got := f.idleOf(nb); !got.LastProbeTime.Equal(&suspended.LastProbeTime) {
		t.Errorf("a suspended notebook was probed: lastProbeTime %s", got.LastProbeTime)
	}
	if len(srv.Requests()) != n {
		t.Errorf("requests to a suspended notebook's pod: %v", srv.Requests()[n:])
	}

	// Every request went to the report or to Jupyter under NB_PREFIX,
	// marked as a probe and asking Jupyter not to count it.
	for _, r := range srv.Requests() {
		switch {
		case r.Path == activity.ReportPath:
		case r.Path == "/notebook/research/nb/api/status" || r.Path == "/notebook/research/nb/api/kernels":
			if r.RawQuery != "no_track_activity=1" {
				t.Errorf("Jupyter request %s?%s without no_track_activity", r.Path, r.RawQuery)
			}
		default:
			t.Errorf("unexpected request %s", r.Path)
		}
		if !r.Probe {
			t.Errorf("request %s without %s", r.Path, activity.ProbeHeader)
		}
	}
}

// TestKeeperBusyGPU: a notebook whose only activity is a busy GPU is never
// reclaimed, while one on an idle GPU is; once its GPU is idle too, the
// first becomes Idle, saying for how long the GPU was watched idle.
func TestKeeperBusyGPU(t *testing.T) {
	f := newFixture(t, map[string]string{IdleAfterAnnotationKey: "10m", SuspendAfterAnnotationKey: "20m"}, nil)
	trainer, _ := f.notebook(testNS, "trainer", tensorstackv1beta1.NotebookJupyter, 1)
	idler, _ := f.notebook(testNS, "idler", tensorstackv1beta1.NotebookJupyter, 1)
	f.agent.Assign(testNS, "trainer-0", tensorstackv1beta1.NotebookContainer, 7)
	f.agent.Assign(testNS, "idler-0", tensorstackv1beta1.NotebookContainer, 5)
	f.agent.SetUtilization(7, 80)
	f.agent.SetUtilization(5, 0)
	f.agent.Collect()

	f.advance(3*time.Hour, func() {
		if c := f.idleOf(trainer); c == nil || c.Status != corev1.ConditionFalse {
			t.Fatalf("trainer on a busy GPU: Idle %+v at %s", c, f.clock.Now().Sub(t0))
		}
	})
	f.wantIdle(trainer, corev1.ConditionFalse, ReasonActive, "GPU 80% (above 5%)", "kernels idle", "no request for 3h")
	f.get(trainer)
	if trainer.Spec.Suspend {
		t.Fatal("trainer suspended")
	}
	f.wantEvents("trainer")
	f.get(idler)
	if !idler.Spec.Suspend {
		t.Fatal("idler on an idle GPU not suspended")
	}
	f.wantEvents("idler", "Normal Idle: Idle, no activity for 10m (suspended after 20m Idle): no request for 10m",
		"Normal Suspended: Suspended after 20m Idle: no request for 30m")
	// The Keeper read the GPU from the first probe, a minute after the
	// pod's start: it says so.
	if got := f.events.of("idler"); !strings.Contains(got[0], "GPU at most 0% for 9m") {
		t.Errorf("the Idle event does not name the GPU: %q", got[0])
	}

	// The GPU goes idle: Idle only once the Keeper watched it so for 10m.
	f.agent.SetUtilization(7, 2)
	f.agent.Collect()
	f.advance(9*time.Minute, nil)
	f.wantIdle(trainer, corev1.ConditionFalse, ReasonActive, "GPU at most 2% for 9m")
	f.advance(time.Minute, nil)
	f.wantIdle(trainer, corev1.ConditionTrue, ReasonNoActivity, "GPU at most 2% for 10m")
}

// TestKeeperActiveAgain: an Idle TensorBoard that gets a request is active
// again, and its condition has no reason (the type has none).
func TestKeeperActiveAgain(t *testing.T) {
	f := newFixture(t, nil, nil)
	spec := podSpec("tensorboard", 0)
	tb := &tensorstackv1beta1.TensorBoard{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "tb", UID: "tb-uid"}}
	f.create(tb)
	p, srv := f.runPod(testNS, "tb-tensorboard-5d8f-x", spec)
	tb.Status.Pod = podStatus(p)
	if err := f.c.Status().Update(f.ctx, tb); err != nil {
		t.Fatal(err)
	}

	f.clock.Step(61 * time.Minute)
	f.probe()
	f.wantIdle(tb, corev1.ConditionTrue, "", "No activity for 1h1m: no request for 1h1m")
	f.wantEvents("tb", "Normal Idle:")

	at := f.clock.Now().Add(30 * time.Second)
	srv.SetReport(func(r *activity.Report) { r.LastRequest = &at })
	f.clock.Step(time.Minute)
	f.probe()
	f.wantIdle(tb, corev1.ConditionFalse, "", "Active: last request 30s ago")
	f.wantEvents("tb", "Normal Idle:", "Normal Active: Active again: last request 30s ago")

	// An SSH session open is activity too.
	f.clock.Step(2 * time.Hour)
	srv.SetReport(func(r *activity.Report) { r.SSHSessions = 1 })
	f.probe()
	f.wantIdle(tb, corev1.ConditionFalse, "", "1 SSH session(s) open")
}

// TestKeeperRStudioNeverIdle: RStudio notebooks are never Idle, and their
// pods are not probed.
func TestKeeperRStudioNeverIdle(t *testing.T) {
	f := newFixture(t, map[string]string{IdleAfterAnnotationKey: "1m"}, nil)
	nb, srv := f.notebook(testNS, "rs", tensorstackv1beta1.NotebookRStudio, 0)
	f.advance(3*time.Hour, nil)
	f.clock.Step(48 * time.Hour)
	f.probe()
	f.wantIdle(nb, corev1.ConditionFalse, ReasonNeverIdle, "RStudio notebooks are never idle")
	f.get(nb)
	if nb.Spec.Suspend {
		t.Fatal("an RStudio notebook was suspended")
	}
	f.wantEvents("rs")
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests to an RStudio notebook's pod", n)
	}
}

// TestKeeperNamespaceNotOptedIn: a namespace without the label is left
// alone.
func TestKeeperNamespaceNotOptedIn(t *testing.T) {
	f := newFixture(t, nil, nil)
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{EnabledLabelKey: "disabled"}}})
	nb, srv := f.notebook("other", "nb", tensorstackv1beta1.NotebookJupyter, 0)
	f.clock.Step(30 * time.Hour)
	f.probe()
	f.probe()
	if c := f.idleOf(nb); c != nil {
		t.Errorf("Idle condition in a namespace not opted in: %+v", c)
	}
	if nb.Spec.Suspend || len(f.events.of("nb")) > 0 || len(srv.Requests()) > 0 {
		t.Errorf("touched: suspend %v, events %q, %d requests", nb.Spec.Suspend, f.events.of("nb"), len(srv.Requests()))
	}
}

// TestKeeperInvalidConfig: an invalid annotation is one Warning event on
// the Namespace, and its default applies.
func TestKeeperInvalidConfig(t *testing.T) {
	f := newFixture(t, map[string]string{IdleAfterAnnotationKey: "soon", GPUUtilizationThresholdAnnotationKey: "7"}, nil)
	nb, _ := f.notebook(testNS, "nb", tensorstackv1beta1.NotebookJupyter, 0)
	f.probe()
	f.clock.Step(59 * time.Minute)
	f.probe()
	f.wantIdle(nb, corev1.ConditionFalse, ReasonActive)
	f.clock.Step(2 * time.Minute)
	f.probe()
	f.wantIdle(nb, corev1.ConditionTrue, ReasonNoActivity)
	f.wantEvents(testNS, `Warning InvalidResourceKeeperConfig: Invalid Resource Keeper settings: tensorstack.dev/idle-after="soon": not a duration such as 1h or 90m; using 1h`)
}

// TestKeeperUnknownEvidence: a source that cannot be read is no evidence
// of idleness.
func TestKeeperUnknownEvidence(t *testing.T) {
	f := newFixture(t, nil, nil)
	down, downSrv := f.notebook(testNS, "down", tensorstackv1beta1.NotebookJupyter, 0)
	downSrv.FailReport(500)
	// A GPU notebook on a node whose agent does not answer.
	f.net.Route(agentIP, DefaultNodeAgentPort, "")
	gpu, _ := f.notebook(testNS, "gpu", tensorstackv1beta1.NotebookJupyter, 1)

	f.clock.Step(3 * time.Hour)
	f.probe()
	f.wantIdle(down, corev1.ConditionUnknown, ReasonEvidenceIncomplete, "Cannot tell whether idle (requests unknown, SSH unknown)", "500 Internal Server Error")
	f.wantIdle(gpu, corev1.ConditionUnknown, ReasonEvidenceIncomplete, "Cannot tell whether idle (GPU unknown)", "GPU unknown (scraping the node agent on node-a")
	f.wantEvents("down")

	// Idle, then the sidecar fails: still Idle, never suspended on it.
	downSrv.FailReport(0)
	f.clock.Step(time.Minute)
	f.probe()
	f.wantIdle(down, corev1.ConditionTrue, ReasonNoActivity)
	downSrv.FailReport(503)
	f.clock.Step(25 * time.Hour)
	f.probe()
	f.wantIdle(down, corev1.ConditionTrue, ReasonNoActivity, "Cannot tell whether still idle (requests unknown, SSH unknown)")
	f.get(down)
	if down.Spec.Suspend {
		t.Error("suspended on unknown evidence")
	}
}

// TestKeeperJupyter: a busy kernel is activity; the token in the notebook
// container's environment is sent; a Jupyter API that refuses is unknown,
// and the sidecar decides.
func TestKeeperJupyter(t *testing.T) {
	f := newFixture(t, nil, nil)
	busy, busySrv := f.notebook(testNS, "busy", tensorstackv1beta1.NotebookJupyter, 0,
		corev1.EnvVar{Name: "JUPYTER_TOKEN", Value: "s3cret"})
	busySrv.RequireToken("s3cret")
	busySrv.SetJupyter(reclaimtest.JupyterStatus{Started: t0, LastActivity: t0},
		reclaimtest.JupyterKernel{ID: "k1", LastActivity: t0, ExecutionState: "busy"},
		reclaimtest.JupyterKernel{ID: "k2", LastActivity: t0, ExecutionState: "idle"})
	locked, lockedSrv := f.notebook(testNS, "locked", tensorstackv1beta1.NotebookJupyter, 0)
	lockedSrv.FailJupyter(403)

	f.clock.Step(2 * time.Hour)
	f.probe()
	f.wantIdle(busy, corev1.ConditionFalse, ReasonActive, "1 of 2 kernel(s) busy")
	f.wantIdle(locked, corev1.ConditionTrue, ReasonNoActivity, "no request for 2h", "Jupyter unknown (GET http://10.1.0.2:8080/api/status?no_track_activity=1: 403 Forbidden)")
	for _, r := range busySrv.Requests() {
		if r.Path != activity.ReportPath && r.Authorization != "token s3cret" {
			t.Errorf("Jupyter request %s with Authorization %q", r.Path, r.Authorization)
		}
	}
}

// TestKeeperJupyterUnreadable: a Jupyter that answered, with a busy
// kernel, and then fails is no evidence of idleness until it has been
// unreadable for idle-after; then the sidecar decides.
func TestKeeperJupyterUnreadable(t *testing.T) {
	f := newFixture(t, nil, nil)
	nb, srv := f.notebook(testNS, "nb", tensorstackv1beta1.NotebookJupyter, 0)
	srv.SetJupyter(reclaimtest.JupyterStatus{Started: t0, LastActivity: t0},
		reclaimtest.JupyterKernel{ID: "k1", LastActivity: t0, ExecutionState: "busy"})
	f.advance(61*time.Minute, nil)
	f.wantIdle(nb, corev1.ConditionFalse, ReasonActive, "1 of 1 kernel(s) busy")

	srv.FailJupyter(504)
	f.advance(59*time.Minute, nil)
	f.wantIdle(nb, corev1.ConditionFalse, ReasonActive, "Cannot tell whether still active (Jupyter unknown)", "504 Gateway Timeout")
	f.advance(time.Minute, nil)
	f.wantIdle(nb, corev1.ConditionTrue, ReasonNoActivity, "no request for 2h", "Jupyter unknown")
}

// TestKeeperOwnProbesDiscounted: through a sidecar that counts the
// Keeper's Jupyter calls as requests, a notebook still goes Idle.
func TestKeeperOwnProbesDiscounted(t *testing.T) {
	f := newFixture(t, nil, nil)
	nb, srv := f.notebook(testNS, "nb", tensorstackv1beta1.NotebookJupyter, 0)
	srv.CountProbes(true)
	f.advance(61*time.Minute, nil)
	f.wantIdle(nb, corev1.ConditionTrue, ReasonNoActivity, "no request for 1h1m")

	// A real request, between two probes, still counts.
	at := f.clock.Now().Add(30 * time.Second)
	srv.SetReport(func(r *activity.Report) { r.LastRequest = &at })
	f.clock.Step(5 * time.Minute)
	f.probe()
	f.wantIdle(nb, corev1.ConditionFalse, ReasonActive, "last request 4m ago")
}

// TestKeeperConflict: a conflicting status write is retried on a fresh
// copy, keeping the other conditions.
func TestKeeperConflict(t *testing.T) {
	conflicts := 0
	f := newFixture(t, nil, &interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if _, ok := obj.(*tensorstackv1beta1.Notebook); ok && conflicts < 2 && obj.GetName() == "nb" && obj.GetResourceVersion() != "" {
				if nb := obj.(*tensorstackv1beta1.Notebook); (notebook{nb}).idle() != nil {
					conflicts++
					return apierrors.NewConflict(schema.GroupResource{Group: "tensorstack.dev", Resource: "notebooks"}, obj.GetName(), fmt.Errorf("changed"))
				}
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	})
	nb, _ := f.notebook(testNS, "nb", tensorstackv1beta1.NotebookJupyter, 0)
	f.clock.Step(2 * time.Hour)
	f.probe()
	f.wantIdle(nb, corev1.ConditionTrue, ReasonNoActivity)
	if conflicts != 2 {
		t.Errorf("%d conflicts, want 2", conflicts)
	}
	if len(nb.Status.Conditions) != 2 || nb.Status.Conditions[0].Type != tensorstackv1beta1.ConditionReady {
		t.Errorf("conditions %+v, want Ready kept and Idle added", nb.Status.Conditions)
	}
}

// TestKeeperExplorer: an Explorer's two pods are probed; a request to
// either keeps it active, and the message names each pod.
func TestKeeperExplorer(t *testing.T) {
	f := newFixture(t, nil, nil)
	ex := &tensorstackv1beta1.Explorer{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "ex", UID: "ex-uid"},
		Spec: tensorstackv1beta1.ExplorerSpec{StorageName: "data"}}
	f.create(ex)
	code, codeSrv := f.runPod(testNS, "ex-codeserver-abc", podSpec("code-server", 0))
	files, _ := f.runPod(testNS, "ex-filebrowser-def", podSpec("filebrowser", 0))
	ex.Status.CodeServer = &tensorstackv1beta1.ResourceStatus{Pod: podStatus(code)}
	ex.Status.FileBrowser = &tensorstackv1beta1.ResourceStatus{Pod: podStatus(files)}
	if err := f.c.Status().Update(f.ctx, ex); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(2 * time.Hour)
	at := f.clock.Now().Add(-10 * time.Minute)
	codeSrv.SetReport(func(r *activity.Report) { r.LastRequest = &at })
	f.probe()
	f.wantIdle(ex, corev1.ConditionFalse, ReasonActive, "ex-codeserver-abc: last request 10m ago", "ex-filebrowser-def: no request for 2h")
	f.clock.Step(time.Hour)
	f.probe()
	f.wantIdle(ex, corev1.ConditionTrue, ReasonNoActivity, "ex-codeserver-abc: no request for 1h10m")
}

// TestKeeperSSHActivity: SSH data within idle-after keeps a notebook active,
// and its status.ssh.lastSshClientActivity follows the sidecar.
func TestKeeperSSHActivity(t *testing.T) {
	f := newFixture(t, nil, nil)
	nb, srv := f.notebook(testNS, "nb", tensorstackv1beta1.NotebookJupyter, 0)
	nb.Status.SSH = &tensorstackv1beta1.NotebookSSHStatus{ServiceName: "managed-notebook-x-ssh", Port: 22}
	if err := f.c.Status().Update(f.ctx, nb); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(3 * time.Hour)
	at := f.clock.Now().Add(-20 * time.Minute)
	srv.SetReport(func(r *activity.Report) { r.LastSSH = &at })
	f.probe()
	f.wantIdle(nb, corev1.ConditionFalse, ReasonActive, "last SSH 20m ago")
	if got := nb.Status.SSH.LastSSHClientActivity; got == nil || !got.Time.Equal(at) {
		t.Errorf("lastSshClientActivity %v, want %s", got, at)
	}
	if nb.Status.SSH.ServiceName != "managed-notebook-x-ssh" {
		t.Errorf("status.ssh changed: %+v", nb.Status.SSH)
	}

	// An open session is activity now.
	f.clock.Step(2 * time.Hour)
	srv.SetReport(func(r *activity.Report) { r.SSHSessions = 1 })
	f.probe()
	f.wantIdle(nb, corev1.ConditionFalse, ReasonActive, "1 SSH session(s) open")
	if got := nb.Status.SSH.LastSSHClientActivity; got == nil || !got.Time.Equal(f.clock.Now()) {
		t.Errorf("lastSshClientActivity %v, want now", got)
	}
}
