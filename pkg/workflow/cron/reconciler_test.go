package cron

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

const (
	testNS   = "ns"
	testName = "nightly"
)

// created is the creation time of the test CronWorkflowRuns.
var created = at("2026-03-02 09:59:30")

// cronWrapper builds a test CronWorkflowRun.
type cronWrapper struct{ batchv1beta1.CronWorkflowRun }

// makeCron is a CronWorkflowRun running every minute, created at created.
func makeCron() *cronWrapper {
	return &cronWrapper{batchv1beta1.CronWorkflowRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: testNS, Name: testName, UID: "cron-uid", Generation: 1,
			CreationTimestamp: metav1.NewTime(created),
		},
		Spec: batchv1beta1.CronWorkflowRunSpec{
			Schedule: "* * * * *",
			WorkflowRun: batchv1beta1.WorkflowRunTemplateSpec{
				Spec: batchv1beta1.WorkflowRunSpec{WorkflowTemplateRef: "train"},
			},
		},
	}}
}

func (c *cronWrapper) Schedule(s string) *cronWrapper { c.Spec.Schedule = s; return c }
func (c *cronWrapper) Policy(p batchv1beta1.ConcurrencyPolicy) *cronWrapper {
	c.Spec.ConcurrencyPolicy = p
	return c
}
func (c *cronWrapper) Deadline(s int64) *cronWrapper { c.Spec.StartingDeadlineSeconds = &s; return c }
func (c *cronWrapper) Suspend() *cronWrapper         { c.Spec.Suspend = true; return c }
func (c *cronWrapper) Limits(ok, bad *int32) *cronWrapper {
	c.Spec.SuccessfulRunsHistoryLimit, c.Spec.FailedRunsHistoryLimit = ok, bad
	return c
}
func (c *cronWrapper) LastSchedule(s string) *cronWrapper {
	c.Status.LastScheduleTime = &metav1.Time{Time: at(s)}
	return c
}
func (c *cronWrapper) Obj() *batchv1beta1.CronWorkflowRun { return c.DeepCopy() }

// makeRun is a run of the test CronWorkflowRun for the time s, in phase.
func makeRun(s string, phase batchv1beta1.NodePhase) *batchv1beta1.WorkflowRun {
	t := at(s)
	return &batchv1beta1.WorkflowRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: testNS, Name: RunName(testName, t), UID: types.UID("uid-" + RunName(testName, t)),
			Labels:            map[string]string{batchv1beta1.CronWorkflowRunLabel: testName},
			CreationTimestamp: metav1.NewTime(t),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: batchv1beta1.GroupVersion.String(), Kind: "CronWorkflowRun", Name: testName, UID: "cron-uid",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec:   batchv1beta1.WorkflowRunSpec{WorkflowTemplateRef: "train"},
		Status: batchv1beta1.WorkflowRunStatus{WorkflowRunStatusFields: batchv1beta1.WorkflowRunStatusFields{Phase: phase}},
	}
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := batchv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// fixture is a reconciler over a fake client, at a fake time.
type fixture struct {
	r        *Reconciler
	c        client.Client
	clock    *clocktesting.FakeClock
	recorder *events.FakeRecorder
}

func newFixture(t *testing.T, now string, funcs *interceptor.Funcs, objs ...client.Object) *fixture {
	t.Helper()
	scheme := testScheme(t)
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&batchv1beta1.CronWorkflowRun{}, &batchv1beta1.WorkflowRun{})
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	c := b.Build()
	clk := clocktesting.NewFakeClock(at(now))
	rec := events.NewFakeRecorder(100)
	return &fixture{r: NewReconciler(c, c, scheme, rec, clk), c: c, clock: clk, recorder: rec}
}

// reconcile reconciles the test CronWorkflowRun once.
func (f *fixture) reconcile(t *testing.T) error {
	t.Helper()
	_, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: testNS, Name: testName}})
	return err
}

// cron gets the test CronWorkflowRun.
func (f *fixture) cron(t *testing.T) *batchv1beta1.CronWorkflowRun {
	t.Helper()
	c := &batchv1beta1.CronWorkflowRun{}
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: testNS, Name: testName}, c); err != nil {
		t.Fatal(err)
	}
	return c
}

// runs returns the names and phases of the runs, "name:phase", sorted.
func (f *fixture) runs(t *testing.T) []string {
	t.Helper()
	var list batchv1beta1.WorkflowRunList
	if err := f.c.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range list.Items {
		out = append(out, r.Name+":"+string(r.Status.Phase))
	}
	sort.Strings(out)
	return out
}

// events drains the recorded events, "Type Reason" each.
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			typ, rest, _ := strings.Cut(e, " ")
			reason, _, _ := strings.Cut(rest, " ")
			out = append(out, typ+" "+reason)
		default:
			return out
		}
	}
}

// runName is the run name of the test CronWorkflowRun for s, with phase.
func runName(s string, phase batchv1beta1.NodePhase) string {
	return RunName(testName, at(s)) + ":" + string(phase)
}

// conditions are "Type=Status/Reason" of the status.
func conditions(st batchv1beta1.CronWorkflowRunStatus) []string {
	var out []string
	for _, c := range st.Conditions {
		out = append(out, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return out
}

func TestReconcile(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "batch.tensorstack.dev", Kind: "WorkflowRun"}, "x",
		field.ErrorList{field.Invalid(field.NewPath("spec"), "", "exactly one of spec.workflowTemplateRef and spec.workflowTemplateSpec is required")})
	testCases := []struct {
		name  string
		cron  *batchv1beta1.CronWorkflowRun
		runs  []*batchv1beta1.WorkflowRun
		now   string
		funcs *interceptor.Funcs

		wantErr           bool
		wantRuns          []string
		wantLastSchedule  string // empty: unset
		wantActive        []string
		wantConditions    []string
		wantEvents        []string
		wantWake          string // empty: none
		wantFailedMessage string // a substring of HasFailedRun's message
	}{
		{
			name: "before the first time: nothing, conditions False, wake at it",
			cron: makeCron().Obj(), now: "2026-03-02 09:59:45",
			wantConditions: []string{"HasStarted=False/NoRunStarted", "IsRunning=False/NoRunsActive", "HasSuccessfulRun=False/NoRunSucceeded", "HasFailedRun=False/NoRunFailed"},
			wantWake:       "2026-03-02 10:00:00",
		},
		{
			name: "the first time: started",
			cron: makeCron().Obj(), now: "2026-03-02 10:00:00",
			wantRuns:         []string{runName("2026-03-02 10:00:00", "")},
			wantLastSchedule: "2026-03-02 10:00:00",
			wantActive:       []string{RunName(testName, at("2026-03-02 10:00:00"))},
			wantConditions:   []string{"HasStarted=True/RunStarted", "IsRunning=True/RunsActive", "HasSuccessfulRun=False/NoRunSucceeded", "HasFailedRun=False/NoRunFailed"},
			wantEvents:       []string{"Normal RunStarted"},
			wantWake:         "2026-03-02 10:01:00",
		},
		{
			name: "late without a deadline: only the latest time is started",
			cron: makeCron().LastSchedule("2026-03-02 10:00:00").Obj(), now: "2026-03-02 10:05:40",
			wantRuns:         []string{runName("2026-03-02 10:05:00", "")},
			wantLastSchedule: "2026-03-02 10:05:00",
			wantEvents:       []string{"Warning MissedSchedule", "Normal RunStarted"},
			wantWake:         "2026-03-02 10:06:00",
		},
		{
			name: "within the starting deadline: started",
			cron: makeCron().Deadline(30).Obj(), now: "2026-03-02 10:00:30",
			wantRuns:         []string{runName("2026-03-02 10:00:00", "")},
			wantLastSchedule: "2026-03-02 10:00:00",
			wantEvents:       []string{"Normal RunStarted"},
			wantWake:         "2026-03-02 10:01:00",
		},
		{
			name: "past the starting deadline: missed, counts as failed, not considered again",
			cron: makeCron().Deadline(30).Obj(), now: "2026-03-02 10:00:31",
			wantLastSchedule:  "2026-03-02 10:00:00",
			wantConditions:    []string{"HasStarted=False/NoRunStarted", "IsRunning=False/NoRunsActive", "HasSuccessfulRun=False/NoRunSucceeded", "HasFailedRun=True/MissedSchedule"},
			wantFailedMessage: "Missed the run of 2026-03-02T",
			wantEvents:        []string{"Warning MissedSchedule"},
			wantWake:          "2026-03-02 10:01:00",
		},
		{
			name: "the run exists already (started before a restart): not started again",
			cron: makeCron().Obj(), now: "2026-03-02 10:00:10",
			runs:             []*batchv1beta1.WorkflowRun{makeRun("2026-03-02 10:00:00", batchv1beta1.NodeRunning)},
			wantRuns:         []string{runName("2026-03-02 10:00:00", "Running")},
			wantLastSchedule: "2026-03-02 10:00:00",
			wantActive:       []string{RunName(testName, at("2026-03-02 10:00:00"))},
			wantWake:         "2026-03-02 10:01:00",
		},
		{
			name: "the run's name is taken by another WorkflowRun: missed",
			cron: makeCron().Obj(), now: "2026-03-02 10:00:10",
			runs: []*batchv1beta1.WorkflowRun{func() *batchv1beta1.WorkflowRun {
				r := makeRun("2026-03-02 10:00:00", batchv1beta1.NodeRunning)
				r.OwnerReferences, r.Labels = nil, nil
				return r
			}()},
			wantRuns:          []string{runName("2026-03-02 10:00:00", "Running")},
			wantLastSchedule:  "2026-03-02 10:00:00",
			wantConditions:    []string{"HasStarted=False/NoRunStarted", "IsRunning=False/NoRunsActive", "HasSuccessfulRun=False/NoRunSucceeded", "HasFailedRun=True/RunNameConflict"},
			wantEvents:        []string{"Warning RunNameConflict"},
			wantFailedMessage: "is not this CronWorkflowRun's",
			wantWake:          "2026-03-02 10:01:00",
		},
		{
			name: "Allow: started beside a running run",
			cron: makeCron().LastSchedule("2026-03-02 10:00:00").Obj(), now: "2026-03-02 10:01:00",
			runs:             []*batchv1beta1.WorkflowRun{makeRun("2026-03-02 10:00:00", batchv1beta1.NodeRunning)},
			wantRuns:         []string{runName("2026-03-02 10:00:00", "Running"), runName("2026-03-02 10:01:00", "")},
			wantLastSchedule: "2026-03-02 10:01:00",
			wantActive:       []string{RunName(testName, at("2026-03-02 10:00:00")), RunName(testName, at("2026-03-02 10:01:00"))},
			wantEvents:       []string{"Normal RunStarted"},
			wantWake:         "2026-03-02 10:02:00",
		},
		{
			name: "Forbid: skipped while a run runs, and not retried",
			cron: makeCron().Policy(batchv1beta1.ForbidConcurrent).LastSchedule("2026-03-02 10:00:00").Obj(), now: "2026-03-02 10:01:00",
			runs:             []*batchv1beta1.WorkflowRun{makeRun("2026-03-02 10:00:00", batchv1beta1.NodeRunning)},
			wantRuns:         []string{runName("2026-03-02 10:00:00", "Running")},
			wantLastSchedule: "2026-03-02 10:01:00",
			wantActive:       []string{RunName(testName, at("2026-03-02 10:00:00"))},
			wantEvents:       []string{"Normal RunSkipped"},
			wantWake:         "2026-03-02 10:02:00",
		},
		{
			name: "Forbid: started once the runs have finished",
			cron: makeCron().Policy(batchv1beta1.ForbidConcurrent).LastSchedule("2026-03-02 10:00:00").Obj(), now: "2026-03-02 10:01:00",
			runs:             []*batchv1beta1.WorkflowRun{makeRun("2026-03-02 10:00:00", batchv1beta1.NodeFailed)},
			wantRuns:         []string{runName("2026-03-02 10:00:00", "Failed"), runName("2026-03-02 10:01:00", "")},
			wantLastSchedule: "2026-03-02 10:01:00",
			wantConditions:   []string{"HasStarted=True/RunStarted", "IsRunning=True/RunsActive", "HasSuccessfulRun=False/NoRunSucceeded", "HasFailedRun=True/RunFailed"},
			wantEvents:       []string{"Normal RunStarted"},
			wantWake:         "2026-03-02 10:02:00",
		},
		{
			name: "Forbid: a run the status does not know of yet is found, not skipped",
			cron: makeCron().Policy(batchv1beta1.ForbidConcurrent).Obj(), now: "2026-03-02 10:00:05",
			runs:             []*batchv1beta1.WorkflowRun{makeRun("2026-03-02 10:00:00", "")},
			wantRuns:         []string{runName("2026-03-02 10:00:00", "")},
			wantLastSchedule: "2026-03-02 10:00:00",
			wantWake:         "2026-03-02 10:01:00",
		},
		{
			name: "Replace: the running run is deleted and the new one started",
			cron: makeCron().Policy(batchv1beta1.ReplaceConcurrent).LastSchedule("2026-03-02 10:00:00").Obj(), now: "2026-03-02 10:01:00",
			runs: []*batchv1beta1.WorkflowRun{
				makeRun("2026-03-02 09:59:00", batchv1beta1.NodeSucceeded), makeRun("2026-03-02 10:00:00", batchv1beta1.NodeRunning),
			},
			wantRuns:         []string{runName("2026-03-02 09:59:00", "Succeeded"), runName("2026-03-02 10:01:00", "")},
			wantLastSchedule: "2026-03-02 10:01:00",
			wantActive:       []string{RunName(testName, at("2026-03-02 10:01:00"))},
			wantEvents:       []string{"Normal RunReplaced", "Normal RunStarted"},
			wantWake:         "2026-03-02 10:02:00",
		},
		{
			name: "Replace: the run of the time itself is not replaced",
			cron: makeCron().Policy(batchv1beta1.ReplaceConcurrent).LastSchedule("2026-03-02 10:00:00").Obj(), now: "2026-03-02 10:01:05",
			runs: []*batchv1beta1.WorkflowRun{
				makeRun("2026-03-02 10:00:00", batchv1beta1.NodeRunning), makeRun("2026-03-02 10:01:00", batchv1beta1.NodeRunning),
			},
			wantRuns:         []string{runName("2026-03-02 10:00:00", "Running"), runName("2026-03-02 10:01:00", "Running")},
			wantLastSchedule: "2026-03-02 10:01:00",
			wantWake:         "2026-03-02 10:02:00",
		},
		{
			name: "suspended: nothing started, the running run goes on, no wake-up",
			cron: makeCron().Suspend().LastSchedule("2026-03-02 10:00:00").Obj(), now: "2026-03-02 10:03:00",
			runs:             []*batchv1beta1.WorkflowRun{makeRun("2026-03-02 10:00:00", batchv1beta1.NodeRunning)},
			wantRuns:         []string{runName("2026-03-02 10:00:00", "Running")},
			wantLastSchedule: "2026-03-02 10:00:00",
			wantActive:       []string{RunName(testName, at("2026-03-02 10:00:00"))},
		},
		{
			name: "invalid schedule: nothing started, an event, no wake-up",
			cron: makeCron().Schedule("0 0 30 2 *").Obj(), now: "2026-03-02 10:03:00",
			wantEvents: []string{"Warning InvalidSchedule"},
		},
		{
			name: "history: the oldest finished runs beyond the limits are deleted",
			cron: makeCron().Limits(ptr.To[int32](2), ptr.To[int32](1)).LastSchedule("2026-03-02 10:06:00").Obj(), now: "2026-03-02 10:06:30",
			runs: []*batchv1beta1.WorkflowRun{
				makeRun("2026-03-02 10:00:00", batchv1beta1.NodeSucceeded),
				makeRun("2026-03-02 10:01:00", batchv1beta1.NodeFailed),
				makeRun("2026-03-02 10:02:00", batchv1beta1.NodeSucceeded),
				makeRun("2026-03-02 10:03:00", batchv1beta1.NodeError),
				makeRun("2026-03-02 10:04:00", batchv1beta1.NodeSucceeded),
				makeRun("2026-03-02 10:05:00", batchv1beta1.NodeRunning),
				makeRun("2026-03-02 10:06:00", batchv1beta1.NodePending),
			},
			wantRuns: []string{
				runName("2026-03-02 10:02:00", "Succeeded"), runName("2026-03-02 10:03:00", "Error"),
				runName("2026-03-02 10:04:00", "Succeeded"), runName("2026-03-02 10:05:00", "Running"), runName("2026-03-02 10:06:00", "Pending"),
			},
			wantLastSchedule: "2026-03-02 10:06:00",
			wantConditions:   []string{"HasStarted=True/RunStarted", "IsRunning=True/RunsActive", "HasSuccessfulRun=True/RunSucceeded", "HasFailedRun=True/RunFailed"},
			wantEvents:       []string{"Normal RunDeleted", "Normal RunDeleted"},
			wantWake:         "2026-03-02 10:07:00",
		},
		{
			name: "history: limits of 0 delete every finished run, the conditions remember them",
			cron: makeCron().Limits(ptr.To[int32](0), ptr.To[int32](0)).LastSchedule("2026-03-02 10:01:00").Obj(), now: "2026-03-02 10:01:30",
			runs: []*batchv1beta1.WorkflowRun{
				makeRun("2026-03-02 10:00:00", batchv1beta1.NodeSucceeded), makeRun("2026-03-02 10:01:00", batchv1beta1.NodeFailed),
			},
			wantLastSchedule: "2026-03-02 10:01:00",
			wantConditions:   []string{"HasStarted=True/RunStarted", "IsRunning=False/NoRunsActive", "HasSuccessfulRun=True/RunSucceeded", "HasFailedRun=True/RunFailed"},
			wantEvents:       []string{"Normal RunDeleted", "Normal RunDeleted"},
			wantWake:         "2026-03-02 10:02:00",
		},
		{
			name: "history: unset limits keep 3 succeeded and 1 failed, as a CronJob",
			cron: makeCron().LastSchedule("2026-03-02 10:06:00").Obj(), now: "2026-03-02 10:06:30",
			runs: []*batchv1beta1.WorkflowRun{
				makeRun("2026-03-02 10:00:00", batchv1beta1.NodeSucceeded),
				makeRun("2026-03-02 10:01:00", batchv1beta1.NodeFailed),
				makeRun("2026-03-02 10:02:00", batchv1beta1.NodeSucceeded),
				makeRun("2026-03-02 10:03:00", batchv1beta1.NodeError),
				makeRun("2026-03-02 10:04:00", batchv1beta1.NodeSucceeded),
				makeRun("2026-03-02 10:05:00", batchv1beta1.NodeSucceeded),
				makeRun("2026-03-02 10:06:00", batchv1beta1.NodeRunning),
			},
			wantRuns: []string{
				runName("2026-03-02 10:02:00", "Succeeded"), runName("2026-03-02 10:03:00", "Error"),
				runName("2026-03-02 10:04:00", "Succeeded"), runName("2026-03-02 10:05:00", "Succeeded"), runName("2026-03-02 10:06:00", "Running"),
			},
			wantLastSchedule: "2026-03-02 10:06:00",
			wantActive:       []string{RunName(testName, at("2026-03-02 10:06:00"))},
			wantConditions:   []string{"HasStarted=True/RunStarted", "IsRunning=True/RunsActive", "HasSuccessfulRun=True/RunSucceeded", "HasFailedRun=True/RunFailed"},
			wantEvents:       []string{"Normal RunDeleted", "Normal RunDeleted"},
			wantWake:         "2026-03-02 10:07:00",
		},
		{
			name: "the API server refuses the run: missed, not retried",
			cron: makeCron().Obj(), now: "2026-03-02 10:00:00",
			funcs: &interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				return invalid
			}},
			wantLastSchedule:  "2026-03-02 10:00:00",
			wantConditions:    []string{"HasStarted=False/NoRunStarted", "IsRunning=False/NoRunsActive", "HasSuccessfulRun=False/NoRunSucceeded", "HasFailedRun=True/FailedCreate"},
			wantFailedMessage: "exactly one of spec.workflowTemplateRef",
			wantEvents:        []string{"Warning FailedCreate"},
			wantWake:          "2026-03-02 10:01:00",
		},
		{
			name: "a transient error creating the run: retried, the time still due",
			cron: makeCron().Obj(), now: "2026-03-02 10:00:00",
			funcs: &interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				return apierrors.NewServiceUnavailable("etcd is down")
			}},
			wantErr:    true,
			wantEvents: []string{"Warning FailedCreate"},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			objs := []client.Object{tc.cron}
			for _, r := range tc.runs {
				objs = append(objs, r)
			}
			f := newFixture(t, tc.now, tc.funcs, objs...)
			err := f.reconcile(t)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Reconcile: %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantRuns, f.runs(t)); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
			got := f.cron(t)
			var last string
			if got.Status.LastScheduleTime != nil {
				last = got.Status.LastScheduleTime.Local().Format("2006-01-02 15:04:05")
			}
			if tc.wantErr {
				// Nothing was acted on: the status is as it was.
				if last != "" {
					t.Errorf("lastScheduleTime %s after an error", last)
				}
			} else if last != tc.wantLastSchedule {
				t.Errorf("lastScheduleTime %q, want %q", last, tc.wantLastSchedule)
			}
			var active []string
			for _, ref := range got.Status.Active {
				active = append(active, ref.Name)
			}
			if tc.wantActive != nil {
				if diff := cmp.Diff(tc.wantActive, active); diff != "" {
					t.Errorf("status.active (-want +got):\n%s", diff)
				}
			}
			if tc.wantConditions != nil {
				if diff := cmp.Diff(tc.wantConditions, conditions(got.Status)); diff != "" {
					t.Errorf("conditions (-want +got):\n%s", diff)
				}
			}
			if tc.wantFailedMessage != "" {
				var msg string
				for _, c := range got.Status.Conditions {
					if c.Type == batchv1beta1.CronHasFailedRun {
						msg = c.Message
					}
				}
				if !strings.Contains(msg, tc.wantFailedMessage) {
					t.Errorf("HasFailedRun message %q, want it to contain %q", msg, tc.wantFailedMessage)
				}
			}
			if diff := cmp.Diff(tc.wantEvents, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			var wake string
			if w := f.r.wakeups.when(types.NamespacedName{Namespace: testNS, Name: testName}); !w.IsZero() {
				wake = w.Local().Format("2006-01-02 15:04:05")
			}
			if !tc.wantErr && wake != tc.wantWake {
				t.Errorf("wake-up at %q, want %q", wake, tc.wantWake)
			}
		})
	}
}

// TestStartedRun: the run carries the template's labels and annotations,
// the CronWorkflowRun's label and controller reference, and its spec.
func TestStartedRun(t *testing.T) {
	cron := makeCron().Obj()
	cron.Spec.WorkflowRun.Metadata = metav1.ObjectMeta{
		Labels:      map[string]string{"team": "vision", batchv1beta1.CronWorkflowRunLabel: "not-this"},
		Annotations: map[string]string{"note": "nightly"},
	}
	cron.Spec.WorkflowRun.Spec.Params = []batchv1beta1.Param{{Name: "epochs", Value: "3"}}
	f := newFixture(t, "2026-03-02 10:00:00", nil, cron)
	if err := f.reconcile(t); err != nil {
		t.Fatal(err)
	}
	run := &batchv1beta1.WorkflowRun{}
	name := RunName(testName, at("2026-03-02 10:00:00"))
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: testNS, Name: name}, run); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"team": "vision", batchv1beta1.CronWorkflowRunLabel: testName}, run.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"note": "nightly"}, run.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(cron.Spec.WorkflowRun.Spec, run.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	owner := metav1.GetControllerOf(run)
	if owner == nil || owner.UID != cron.UID || owner.Kind != "CronWorkflowRun" || !ptr.Deref(owner.BlockOwnerDeletion, false) {
		t.Errorf("controller reference %+v, want the CronWorkflowRun's", owner)
	}
	if cron.Spec.WorkflowRun.Metadata.Labels[batchv1beta1.CronWorkflowRunLabel] != "not-this" {
		t.Error("the template's labels were changed")
	}
}

// TestConditionTimes: lastTransitionTime moves only when a condition's
// status changes, and the sticky conditions stay True.
func TestConditionTimes(t *testing.T) {
	f := newFixture(t, "2026-03-02 10:00:00", nil, makeCron().Obj())
	if err := f.reconcile(t); err != nil {
		t.Fatal(err)
	}
	times := func() map[batchv1beta1.CronWorkflowRunConditionType]string {
		out := map[batchv1beta1.CronWorkflowRunConditionType]string{}
		for _, c := range f.cron(t).Status.Conditions {
			out[c.Type] = string(c.Status) + "@" + c.LastTransitionTime.Local().Format("15:04:05")
		}
		return out
	}
	want := map[batchv1beta1.CronWorkflowRunConditionType]string{
		batchv1beta1.CronHasStarted: "True@10:00:00", batchv1beta1.CronIsRunning: "True@10:00:00",
		batchv1beta1.CronHasSuccessfulRun: "False@10:00:00", batchv1beta1.CronHasFailedRun: "False@10:00:00",
	}
	if diff := cmp.Diff(want, times()); diff != "" {
		t.Fatalf("after the first start (-want +got):\n%s", diff)
	}

	// The run succeeds at 10:00:20; nothing else changes at 10:00:40.
	f.clock.SetTime(at("2026-03-02 10:00:20"))
	setPhase(t, f.c, "2026-03-02 10:00:00", batchv1beta1.NodeSucceeded)
	if err := f.reconcile(t); err != nil {
		t.Fatal(err)
	}
	f.clock.SetTime(at("2026-03-02 10:00:40"))
	if err := f.reconcile(t); err != nil {
		t.Fatal(err)
	}
	want[batchv1beta1.CronIsRunning] = "False@10:00:20"
	want[batchv1beta1.CronHasSuccessfulRun] = "True@10:00:20"
	if diff := cmp.Diff(want, times()); diff != "" {
		t.Fatalf("after the run succeeded (-want +got):\n%s", diff)
	}

	// The next run starts at 10:01 and is deleted by hand: HasStarted and
	// HasSuccessfulRun stay True.
	f.clock.SetTime(at("2026-03-02 10:01:00"))
	if err := f.reconcile(t); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"2026-03-02 10:00:00", "2026-03-02 10:01:00"} {
		if err := f.c.Delete(context.Background(), makeRun(s, "")); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.SetTime(at("2026-03-02 10:01:10"))
	if err := f.reconcile(t); err != nil {
		t.Fatal(err)
	}
	want[batchv1beta1.CronIsRunning] = "False@10:01:10"
	if diff := cmp.Diff(want, times()); diff != "" {
		t.Fatalf("after the runs were deleted (-want +got):\n%s", diff)
	}
	if runs := f.runs(t); len(runs) != 0 {
		t.Errorf("runs %v, want none: a deleted run is not started again", runs)
	}
}

// TestStaleCopy: a reconcile of a stale cached copy of the CronWorkflowRun
// (its lastScheduleTime behind, or not yet suspended) acts on the API
// server's copy: it neither starts a run twice, nor starts one while
// suspended, nor moves lastScheduleTime back.
func TestStaleCopy(t *testing.T) {
	f := newFixture(t, "2026-03-02 10:00:00", nil, makeCron().Obj())
	if err := f.reconcile(t); err != nil {
		t.Fatal(err)
	}
	key := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: testNS, Name: testName}}
	stale := makeCron().Obj()
	stale.ResourceVersion = "1" // before the status update
	r := NewReconciler(staleReader{Client: f.c, cron: stale}, f.c, f.r.scheme, f.recorder, f.clock)
	if _, err := r.Reconcile(context.Background(), key); err != nil {
		t.Errorf("Reconcile of a stale copy: %v", err)
	}
	if runs := f.runs(t); len(runs) != 1 {
		t.Errorf("runs %v, want one", runs)
	}
	if last := f.cron(t).Status.LastScheduleTime; last == nil || !last.Equal(&metav1.Time{Time: at("2026-03-02 10:00:00")}) {
		t.Errorf("lastScheduleTime %v, want 10:00:00", last)
	}

	// Suspended in the API server, not yet in the cache.
	cur := f.cron(t)
	cur.Spec.Suspend = true
	if err := f.c.Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	stale = f.cron(t)
	stale.Spec.Suspend = false
	r = NewReconciler(staleReader{Client: f.c, cron: stale}, f.c, f.r.scheme, f.recorder, f.clock)
	f.clock.SetTime(at("2026-03-02 10:01:00"))
	if _, err := r.Reconcile(context.Background(), key); err != nil {
		t.Errorf("Reconcile of a stale copy: %v", err)
	}
	if runs := f.runs(t); len(runs) != 1 {
		t.Errorf("runs %v, want one: the CronWorkflowRun is suspended", runs)
	}
}

// staleReader serves a stale copy of the test CronWorkflowRun.
type staleReader struct {
	client.Client
	cron *batchv1beta1.CronWorkflowRun
}

func (s staleReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if c, ok := obj.(*batchv1beta1.CronWorkflowRun); ok {
		s.cron.DeepCopyInto(c)
		return nil
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

// setPhase writes the phase of the test CronWorkflowRun's run for s.
func setPhase(t *testing.T, c client.Client, s string, phase batchv1beta1.NodePhase) {
	t.Helper()
	run := &batchv1beta1.WorkflowRun{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: testNS, Name: RunName(testName, at(s))}, run); err != nil {
		t.Fatal(err)
	}
	run.Status.Phase = phase
	if err := c.Status().Update(context.Background(), run); err != nil {
		t.Fatal(err)
	}
}
