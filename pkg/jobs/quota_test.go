package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/accelstack/accelstack/api"
	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobkind"
)

// plainKind is a job kind with nothing of its own: GenericJobs whose
// replicas run as their templates say and never finish.
type plainKind struct{}

func (plainKind) Component() string { return "plainjob" }
func (plainKind) Info() jobkind.Info {
	return jobkind.T9kJob("GenericJob", "genericjobs", "genericJob")
}
func (plainKind) NewObject() client.Object { return &batchv1beta1.GenericJob{} }
func (plainKind) View(obj client.Object) *Job {
	gj := obj.(*batchv1beta1.GenericJob)
	job := &Job{Object: gj, RunMode: gj.Spec.RunMode, Status: &gj.Status}
	for i := range gj.Spec.ReplicaSpecs {
		rs := &gj.Spec.ReplicaSpecs[i]
		job.Replicas = append(job.Replicas, Replica{
			Type: rs.Type, Replicas: ReplicaCount(rs.Replicas), Restart: RestartOf(rs.RestartPolicy), Template: &rs.Template,
		})
	}
	return job
}
func (plainKind) Validate(_, _ client.Object) field.ErrorList          { return nil }
func (plainKind) Decorate(*corev1.Pod, *Replica, int32, *Job) []string { return nil }
func (plainKind) Outcome(*Job, *States) Outcome                        { return Outcome{} }

// quotaError is the API server's refusal of pod name by the quota q.
func quotaError(name string) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, name,
		errors.New("exceeded quota: q, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=1, limited: requests.nvidia.com/gpu=1"))
}

// quotaEnv is a reconciler over a fake API server whose quota refuses the
// pods refuse says.
type quotaEnv struct {
	r        *Reconciler
	c        client.Client
	recorder *events.FakeRecorder
	key      client.ObjectKey
	// refuse says which pod names the quota refuses.
	refuse atomic.Value // func(string) bool
}

func newQuotaEnv(t *testing.T, replicas int32) *quotaEnv {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	api.MustAddToScheme(scheme)
	job := &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "job-uid"},
		Spec: batchv1beta1.GenericJobSpec{ReplicaSpecs: []batchv1beta1.ReplicaSpec{{
			Type: "worker", Replicas: &replicas,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "busybox"}}}},
		}}},
	}
	e := &quotaEnv{recorder: events.NewFakeRecorder(100), key: client.ObjectKeyFromObject(job)}
	e.refuse.Store(func(string) bool { return false })
	e.c = fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(job).WithStatusSubresource(job).
		WithIndex(&corev1.Pod{}, ownerIndex, indexOwner).
		WithIndex(&corev1.Service{}, ownerIndex, indexOwner).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Pod); ok && e.refuse.Load().(func(string) bool)(obj.GetName()) {
				return quotaError(obj.GetName())
			}
			return c.Create(ctx, obj, opts...)
		}}).Build()
	e.r = &Reconciler{
		kind: plainKind{}, client: e.c, apiReader: e.c, cache: e.c, scheme: scheme,
		recorder: e.recorder, deleted: newDeletedPods(), addressWaits: newAddressWaits(),
	}
	return e
}

// reconcile runs one reconcile of the job, which must not fail.
func (e *quotaEnv) reconcile(t *testing.T) ctrl.Result {
	t.Helper()
	res, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: e.key})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return res
}

// job reads the job.
func (e *quotaEnv) job(t *testing.T) *batchv1beta1.GenericJob {
	t.Helper()
	gj := &batchv1beta1.GenericJob{}
	if err := e.c.Get(context.Background(), e.key, gj); err != nil {
		t.Fatal(err)
	}
	return gj
}

// pods returns the number of the job's pods.
func (e *quotaEnv) pods(t *testing.T) int {
	t.Helper()
	var list corev1.PodList
	if err := e.c.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

// events drains the events recorded so far.
func (e *quotaEnv) events() []string {
	var out []string
	for {
		select {
		case ev := <-e.recorder.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// TestQuotaRefusedPods: a job whose pods the quota refuses is accepted
// and not failed; ReplicaFailure says ExceededQuota with the API server's
// words, the event CreationFailed carries them, the reconcile comes back
// after quotaRetry without an error, and once the quota admits the pods
// the condition turns False.
func TestQuotaRefusedPods(t *testing.T) {
	e := newQuotaEnv(t, 2)
	e.refuse.Store(func(string) bool { return true })

	res := e.reconcile(t)
	if res.RequeueAfter != quotaRetry {
		t.Errorf("RequeueAfter = %v, want %v", res.RequeueAfter, quotaRetry)
	}
	gj := e.job(t)
	c := Condition(&gj.Status, batchv1beta1.JobReplicaFailure)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonExceededQuota {
		t.Fatalf("ReplicaFailure = %+v, want True %s", c, ReasonExceededQuota)
	}
	wantMsg := msgQuotaPrefix + "2 of 2 pods the job is creating: " + quotaError("job-worker-0").Error()
	if c.Message != wantMsg {
		t.Errorf("ReplicaFailure message\n %q, want\n %q", c.Message, wantMsg)
	}
	if gj.Status.Phase != batchv1beta1.JobPending || Finished(&gj.Status) {
		t.Errorf("phase %q, finished %v: want a Pending job", gj.Status.Phase, Finished(&gj.Status))
	}
	evs := e.events()
	refusals := 0
	for _, ev := range evs {
		if strings.HasPrefix(ev, corev1.EventTypeWarning+" "+EventCreationFailed+" ") && strings.Contains(ev, "exceeded quota: q") {
			refusals++
		}
	}
	if refusals != 2 {
		t.Errorf("events %q: want 2 CreationFailed events quoting the quota", evs)
	}

	// Still refused: the status is not written again.
	rv, since := gj.ResourceVersion, c.LastTransitionTime
	e.reconcile(t)
	gj = e.job(t)
	if gj.ResourceVersion != rv {
		t.Errorf("status rewritten while nothing changed: %+v", gj.Status.Conditions)
	}

	// One pod admitted, one refused.
	e.refuse.Store(func(name string) bool { return name == "job-worker-1" })
	e.reconcile(t)
	gj = e.job(t)
	c = Condition(&gj.Status, batchv1beta1.JobReplicaFailure)
	if c == nil || c.Status != corev1.ConditionTrue || !strings.HasPrefix(c.Message, msgQuotaPrefix+"1 of 2 pods") || !strings.Contains(c.Message, `"job-worker-1"`) {
		t.Fatalf("ReplicaFailure = %+v, want True naming job-worker-1, 1 of 2", c)
	}
	if !c.LastTransitionTime.Equal(&since) {
		t.Errorf("lastTransitionTime moved from %v to %v while the condition stayed True", since, c.LastTransitionTime)
	}
	if n := e.pods(t); n != 1 {
		t.Errorf("%d pods, want 1", n)
	}

	// The quota admits the rest.
	e.refuse.Store(func(string) bool { return false })
	res = e.reconcile(t)
	if res.RequeueAfter != 0 {
		t.Errorf("RequeueAfter = %v once every pod is created, want 0", res.RequeueAfter)
	}
	gj = e.job(t)
	c = Condition(&gj.Status, batchv1beta1.JobReplicaFailure)
	if c == nil || c.Status != corev1.ConditionFalse || c.Reason != reasonQuotaAdmits {
		t.Errorf("ReplicaFailure = %+v, want False %s", c, reasonQuotaAdmits)
	}
	if n := e.pods(t); n != 2 {
		t.Errorf("%d pods, want 2", n)
	}
	// The next reconcile sees every pod created: the job is initialized
	// and ReplicaFailure back to the usual words.
	e.reconcile(t)
	gj = e.job(t)
	if c := Condition(&gj.Status, batchv1beta1.JobReplicaFailure); c == nil || c.Status != corev1.ConditionFalse || c.Reason != reasonNone {
		t.Errorf("ReplicaFailure = %+v, want False %s", c, reasonNone)
	}
}

// TestQuotaRefusalClearedByPause: a paused job wants no pods, so no quota
// refuses them.
func TestQuotaRefusalClearedByPause(t *testing.T) {
	e := newQuotaEnv(t, 1)
	e.refuse.Store(func(string) bool { return true })
	e.reconcile(t)
	if gj := e.job(t); !quotaRefused(&gj.Status) {
		t.Fatalf("conditions %+v, want a quota refusal", gj.Status.Conditions)
	}
	gj := e.job(t)
	gj.Spec.RunMode = &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{Enabled: true}}
	if err := e.c.Update(context.Background(), gj); err != nil {
		t.Fatal(err)
	}
	e.reconcile(t)
	gj = e.job(t)
	if quotaRefused(&gj.Status) {
		t.Errorf("a paused job still reports a quota refusal: %+v", gj.Status.Conditions)
	}
}

// TestQuotaRefusal tells the quota's refusals from other errors.
func TestQuotaRefusal(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"exceeded", quotaError("p"), true},
		{"wrapped", fmt.Errorf("creating pod p: %w", quotaError("p")), true},
		{"must specify", apierrors.NewForbidden(pods, "p", errors.New("failed quota: q: must specify limits.cpu for: worker")), true},
		{"status unknown", apierrors.NewForbidden(pods, "p", errors.New("status unknown for quota: q, resources: requests.cpu")), true},
		{"pod security", apierrors.NewForbidden(pods, "p", errors.New(`violates PodSecurity "restricted:latest"`)), false},
		{"not forbidden", errors.New("exceeded quota: q"), false},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p", nil), false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := quotaRefusal(tc.err); got != tc.want {
				t.Errorf("quotaRefusal(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestProgressKeepsQuotaRefusal: the status a running job's pods give does
// not clear a quota's refusal, which only the creation of the refused pods
// clears; a replica's failure still takes precedence.
func TestProgressKeepsQuotaRefusal(t *testing.T) {
	now := metav1.Now()
	gj := &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Name: "job"},
		Spec: batchv1beta1.GenericJobSpec{ReplicaSpecs: []batchv1beta1.ReplicaSpec{{
			Type: "worker", Replicas: ptrInt32(1),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker"}}}},
		}}},
	}
	job := plainKind{}.View(gj)
	setCondition(job.Status, batchv1beta1.JobInitialized, corev1.ConditionTrue, reasonNone, msgInitialized, now)
	setQuotaRefused(job.Status, []string{"refused"}, 1, now)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job-worker-0", Labels: map[string]string{ReplicaTypeLabel: "worker", ReplicaIndexLabel: "0"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	progress(job.Status, job, StatesOf(job, []*corev1.Pod{pod}), now)
	if !quotaRefused(job.Status) {
		t.Errorf("progress cleared the quota refusal: %+v", job.Status.Conditions)
	}
}

func ptrInt32(v int32) *int32 { return &v }
