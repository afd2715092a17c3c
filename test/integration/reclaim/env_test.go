package reclaim

import (
	"context"
	"fmt"
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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/reclaim"
	"github.com/accelstack/accelstack/pkg/reclaim/reclaimtest"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// wait bounds each wait for the Keeper to act on a step of the clock.
const wait = 30 * time.Second

// node is the node every pod runs on.
const node = "gpu-node-1"

// env is the control plane the tests share.
type env struct {
	cp *harness.ControlPlane
	c  client.Client
}

var counter atomic.Int32

func startEnv(t *testing.T) *env {
	t.Helper()
	ctrl.SetLogger(logr.Discard())
	cp := harness.StartControlPlane(t)
	return &env{cp: cp, c: cp.Client}
}

// test is one test's namespaces, fake clock, servers and Keeper.
type test struct {
	*env
	t       *testing.T
	ctx     context.Context
	n       int32
	ns      string
	agentNS string
	clock   *clocktesting.FakeClock
	net     *reclaimtest.Network
	agent   *reclaimtest.NodeAgent
	ips     int
}

// newTest makes an opted-in namespace with annotations, a namespace with
// a node agent pod on node, and starts the Keeper on a fake clock.
func (e *env) newTest(t *testing.T, annotations map[string]string) *test {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	n := counter.Add(1)
	tt := &test{
		env: e, t: t, ctx: ctx, n: n,
		ns: fmt.Sprintf("project-%d", n), agentNS: fmt.Sprintf("agents-%d", n),
		clock: clocktesting.NewFakeClock(time.Now().Truncate(time.Second)),
		net:   reclaimtest.NewNetwork(), agent: reclaimtest.StartNodeAgent(t),
	}
	tt.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tt.ns,
		Labels: map[string]string{reclaim.EnabledLabelKey: reclaim.EnabledLabelValue}, Annotations: annotations}})
	// Later tests' Keepers leave this namespace alone.
	t.Cleanup(func() { tt.optOut(tt.ns) })
	tt.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tt.agentNS}})
	agentIP := fmt.Sprintf("10.200.%d.1", n)
	tt.runPod(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: tt.agentNS, Name: "node-agent-" + fmt.Sprint(n),
			Labels: map[string]string{"app.kubernetes.io/name": "node-agent"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "node-agent", Image: "node-agent"}}},
	}, agentIP)
	tt.net.Route(agentIP, reclaim.DefaultNodeAgentPort, tt.agent.Addr())
	tt.start()
	return tt
}

// logCapture keeps the Keeper's log for a failed test to show.
type logCapture struct {
	mu    sync.Mutex
	lines []string
}

func (l *logCapture) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 3})
}

func (l *logCapture) last(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines[max(0, len(l.lines)-n):], "\n")
}

// start runs the Keeper alone on a manager of its own, and waits for its
// first probe.
func (tt *test) start() {
	t := tt.t
	t.Helper()
	capture := &logCapture{}
	mgr, err := ctrl.NewManager(tt.cp.Config, ctrl.Options{
		Scheme:                 tt.cp.Scheme,
		Logger:                 capture.logger(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	if err := reclaim.Setup(mgr, reclaim.Options{
		ProbePeriod:        time.Minute,
		Clock:              tt.clock,
		HTTPClient:         tt.net.Client(5 * time.Second),
		NodeAgentNamespace: tt.agentNS,
	}); err != nil {
		t.Fatalf("setting up the Resource Keeper: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager stopped with error: %v", err)
			}
		case <-time.After(wait):
			t.Error("the manager did not stop")
		}
		if t.Failed() {
			t.Logf("Keeper log (last lines):\n%s", capture.last(60))
		}
	})
	tt.probed()
}

// probed waits until the Keeper has probed and waits for the next period.
func (tt *test) probed() {
	tt.t.Helper()
	testutil.Eventually(tt.ctx, tt.t, wait, "the Keeper waits for its next probe", func() (bool, string, error) {
		return tt.clock.HasWaiters(), "probing", nil
	})
}

// step moves the clock d, a probe period at a time, each followed by the
// Keeper's probe; each, when set, is called after each probe.
func (tt *test) step(d time.Duration, each func()) {
	tt.t.Helper()
	for end := tt.clock.Now().Add(d); tt.clock.Now().Before(end); {
		tt.clock.Step(time.Minute)
		tt.probed()
		if each != nil {
			each()
		}
	}
}

// now is the fake clock's time.
func (tt *test) now() time.Time { return tt.clock.Now() }

func (tt *test) create(obj client.Object) {
	tt.t.Helper()
	if err := tt.c.Create(tt.ctx, obj); err != nil {
		tt.t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// optOut removes the opt-in label of a namespace.
func (tt *test) optOut(ns string) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n := &corev1.Namespace{}
		if err := tt.c.Get(context.Background(), client.ObjectKey{Name: ns}, n); err != nil {
			return err
		}
		delete(n.Labels, reclaim.EnabledLabelKey)
		return tt.c.Update(context.Background(), n)
	})
	if err != nil {
		tt.t.Errorf("opting %s out: %v", ns, err)
	}
}

// runPod creates pod and writes its status as the kubelet would once it
// runs: Running at ip, started now.
func (tt *test) runPod(pod *corev1.Pod, ip string) *corev1.Pod {
	tt.t.Helper()
	tt.create(pod)
	now := metav1.NewTime(tt.now())
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &now}
	if err := tt.c.Status().Update(tt.ctx, pod); err != nil {
		tt.t.Fatalf("writing the status of pod %s: %v", pod.Name, err)
	}
	return pod
}

// workloadPod creates a running pod in the test's namespace with the
// activity sidecar and container, holding gpus GPUs; its sidecar, started
// now, is served by the returned reclaimtest.Pod.
func (tt *test) workloadPod(name, container string, gpus int, env ...corev1.EnvVar) (*corev1.Pod, *reclaimtest.Pod) {
	tt.t.Helper()
	c := corev1.Container{Name: container, Image: "server", Env: env}
	if gpus > 0 {
		c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(int64(gpus), resource.DecimalSI)}
	}
	tt.ips++
	ip := fmt.Sprintf("10.100.%d.%d", tt.n, tt.ips)
	pod := tt.runPod(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: tt.ns, Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{
			c, {Name: activity.ContainerName, Image: "activity"},
		}},
	}, ip)
	srv := reclaimtest.NewPod(tt.t, tt.now(), tt.clock.Now)
	tt.net.Route(ip, activity.HTTPPort, srv.Addr())
	return pod, srv
}

// notebook creates a Notebook of type typ and plays its controller: its
// pod <name>-0 runs, holding gpus GPUs, and status.pod names it. Jupyter
// answers with an idle kernel, last active now, unless typ is rstudio.
func (tt *test) notebook(name string, typ tensorstackv1beta1.NotebookType, gpus int) (*tensorstackv1beta1.Notebook, *reclaimtest.Pod) {
	tt.t.Helper()
	nb := &tensorstackv1beta1.Notebook{
		ObjectMeta: metav1.ObjectMeta{Namespace: tt.ns, Name: name},
		Spec: tensorstackv1beta1.NotebookSpec{Type: typ, Template: tensorstackv1beta1.NotebookTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: tensorstackv1beta1.NotebookContainer, Image: "jupyter"}}},
		}},
	}
	tt.create(nb)
	prefix := "/t9k/notebooks/projects/" + tt.ns + "/name/" + name
	_, srv := tt.resume(nb, gpus, corev1.EnvVar{Name: "NB_PREFIX", Value: prefix})
	if typ != tensorstackv1beta1.NotebookRStudio {
		srv.SetJupyter(reclaimtest.JupyterStatus{Started: tt.now(), LastActivity: tt.now()},
			reclaimtest.JupyterKernel{ID: "k1", Name: "python3", LastActivity: tt.now(), ExecutionState: "idle"})
	}
	return nb, srv
}

// resume plays the Notebook controller starting a notebook's pod: a new pod
// <name>-0 (the old one deleted) whose status.pod names it.
func (tt *test) resume(nb *tensorstackv1beta1.Notebook, gpus int, env ...corev1.EnvVar) (*corev1.Pod, *reclaimtest.Pod) {
	tt.t.Helper()
	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: tt.ns, Name: nb.Name + "-0"}}
	if err := tt.c.Delete(tt.ctx, old, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
		tt.t.Fatal(err)
	}
	testutil.Eventually(tt.ctx, tt.t, wait, "the old pod is gone", func() (bool, string, error) {
		err := tt.c.Get(tt.ctx, client.ObjectKeyFromObject(old), &corev1.Pod{})
		return err != nil, fmt.Sprint(err), client.IgnoreNotFound(err)
	})
	pod, srv := tt.workloadPod(nb.Name+"-0", tensorstackv1beta1.NotebookContainer, gpus, env...)
	tt.updateStatus(nb, func(nb *tensorstackv1beta1.Notebook) {
		nb.Status.Phase = tensorstackv1beta1.NotebookRunning
		nb.Status.Pod = &tensorstackv1beta1.PodStatus{Reference: tensorstackv1beta1.PodReference{Name: pod.Name, UID: pod.UID}, Phase: corev1.PodRunning}
		setReady(&nb.Status.Conditions, tt.now())
	})
	return pod, srv
}

// setReady sets the Ready condition as the Notebook controller would.
func setReady(conds *[]tensorstackv1beta1.WorkloadCondition, now time.Time) {
	for i := range *conds {
		if (*conds)[i].Type == tensorstackv1beta1.ConditionReady {
			return
		}
	}
	*conds = append(*conds, tensorstackv1beta1.WorkloadCondition{Type: tensorstackv1beta1.ConditionReady,
		Status: corev1.ConditionTrue, Reason: "PodReady", LastTransitionTime: metav1.NewTime(now)})
}

// updateStatus changes a Notebook's status as its controller would.
func (tt *test) updateStatus(nb *tensorstackv1beta1.Notebook, edit func(*tensorstackv1beta1.Notebook)) {
	tt.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := tt.c.Get(tt.ctx, client.ObjectKeyFromObject(nb), nb); err != nil {
			return err
		}
		edit(nb)
		return tt.c.Status().Update(tt.ctx, nb)
	})
	if err != nil {
		tt.t.Fatalf("updating the status of %s: %v", nb.Name, err)
	}
}

// get reads obj afresh.
func (tt *test) get(obj client.Object) {
	tt.t.Helper()
	if err := tt.c.Get(tt.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		tt.t.Fatal(err)
	}
}

// idleOf returns a Notebook's Idle condition, read afresh; nil when none.
func (tt *test) idleOf(nb *tensorstackv1beta1.Notebook) *tensorstackv1beta1.WorkloadCondition {
	tt.t.Helper()
	tt.get(nb)
	for i := range nb.Status.Conditions {
		if nb.Status.Conditions[i].Type == tensorstackv1beta1.ConditionIdle {
			return &nb.Status.Conditions[i]
		}
	}
	return nil
}

// wantIdle checks a Notebook's Idle condition: status, reason, probed now,
// and a message containing each of parts.
func (tt *test) wantIdle(nb *tensorstackv1beta1.Notebook, status corev1.ConditionStatus, reason string, parts ...string) *tensorstackv1beta1.WorkloadCondition {
	tt.t.Helper()
	c := tt.idleOf(nb)
	if c == nil {
		tt.t.Fatalf("%s has no Idle condition", nb.Name)
	}
	if c.Status != status || c.Reason != reason {
		tt.t.Fatalf("%s: Idle %s/%s %q, want %s/%s", nb.Name, c.Status, c.Reason, c.Message, status, reason)
	}
	for _, p := range parts {
		if !strings.Contains(c.Message, p) {
			tt.t.Errorf("%s: Idle message %q lacks %q", nb.Name, c.Message, p)
		}
	}
	if !c.LastProbeTime.Time.Equal(tt.now()) {
		tt.t.Errorf("%s: lastProbeTime %s, want the probe's time %s", nb.Name, c.LastProbeTime.UTC(), tt.now().UTC())
	}
	return c
}

// events returns the events about an object, "Type Reason: note", oldest
// first.
func (tt *test) events(ns, name string) []string {
	tt.t.Helper()
	var list eventsv1.EventList
	if err := tt.c.List(tt.ctx, &list, client.InNamespace(ns)); err != nil {
		tt.t.Fatal(err)
	}
	sort.SliceStable(list.Items, func(i, j int) bool {
		return list.Items[i].EventTime.Before(&list.Items[j].EventTime)
	})
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out = append(out, e.Type+" "+e.Reason+": "+e.Note)
		}
	}
	return out
}

// waitEvents waits until the events about an object start with want, one
// each, in order.
func (tt *test) waitEvents(ns, name string, want ...string) []string {
	tt.t.Helper()
	var got []string
	testutil.Eventually(tt.ctx, tt.t, wait, fmt.Sprintf("events of %s: %q", name, want), func() (bool, string, error) {
		got = tt.events(ns, name)
		if len(got) != len(want) {
			return false, fmt.Sprintf("%q", got), nil
		}
		for i := range want {
			if !strings.HasPrefix(got[i], want[i]) {
				return false, fmt.Sprintf("%q", got), nil
			}
		}
		return true, "", nil
	})
	return got
}
