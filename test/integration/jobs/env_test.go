package jobs

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// bypassLabel marks namespaces the jobs webhook does not see, standing for a
// webhook that is down.
const bypassLabel = "accelstack.test/bypass-webhook"

// env is the control plane the subtests share.
type env struct {
	cp *harness.ControlPlane
	c  client.Client
	// controllers is the in-process controller manager, whose log the
	// cases search.
	controllers *harness.Controllers
}

var nsCounter atomic.Int32

// startEnv starts the control plane, the kube-controller-manager, the jobs
// webhook configuration of deploy/controllers pointed at the in-process
// controllers, flink-operator's FlinkCluster CRD (testdata), and the
// controllers.
func startEnv(t *testing.T) *env {
	t.Helper()
	cp := harness.StartControlPlane(t, harness.WithControllerManager())
	installWebhook(t, cp)
	installFlinkClusterCRD(t, cp)
	controllers := cp.StartControllers(t)
	return &env{cp: cp, c: cp.Client, controllers: controllers}
}

// installWebhook creates the ValidatingWebhookConfiguration of
// deploy/controllers, served where envtest serves webhooks, as envtest does
// for its own webhook manifests.
func installWebhook(t *testing.T, cp *harness.ControlPlane) {
	t.Helper()
	cp.InstallWebhook(t, "controllers/jobs-webhook.yaml", func(w *admissionregistrationv1.ValidatingWebhook) {
		w.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: bypassLabel, Operator: metav1.LabelSelectorOpDoesNotExist}}}
	})
}

// namespace creates a namespace for one subtest.
func (e *env) namespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	name := fmt.Sprintf("jobs-%d", nsCounter.Add(1))
	if err := e.c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// reconciles counts the reconciles of the job of kind at ns/name that the
// controllers' log shows started, and those that ended.
func (e *env) reconciles(kind, ns, name string) (started, ended int) {
	return testutil.Reconciles(e.controllers.Log(), kind, ns, name)
}

// pokeReconciled annotates job, which the controller of kind reconciles,
// and waits until a reconcile that started after the annotation was
// written has ended. It returns the job's resourceVersion after the
// annotation.
func (e *env) pokeReconciled(ctx context.Context, t *testing.T, kind string, job client.Object) string {
	t.Helper()
	started, _ := e.reconciles(kind, job.GetNamespace(), job.GetName())
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		e.get(ctx, t, job)
		a := job.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a["accelstack.test/poke"] = fmt.Sprint(started)
		job.SetAnnotations(a)
		return e.c.Update(ctx, job)
	})
	if err != nil {
		t.Fatal(err)
	}
	rv := job.GetResourceVersion()
	// Reconciles of one job do not overlap: the one after those already
	// started when the annotation was written started after it.
	testutil.Poll(ctx, t, "a reconcile after the annotation", func() (bool, string, error) {
		_, ended := e.reconciles(kind, job.GetNamespace(), job.GetName())
		return ended > started, fmt.Sprintf("%d started before, %d ended", started, ended), nil
	})
	return rv
}

// pods returns the job's pods by name.
func (e *env) pods(ctx context.Context, t *testing.T, ns, job string) map[string]*corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := e.c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{jobs.JobNameLabel: job}); err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// waitPods waits until exactly the named pods of the job exist (none being
// deleted) and returns them.
func (e *env) waitPods(ctx context.Context, t *testing.T, ns, job string, names ...string) map[string]*corev1.Pod {
	t.Helper()
	var got map[string]*corev1.Pod
	testutil.Poll(ctx, t, "pods "+strings.Join(names, ","), func() (bool, string, error) {
		got = e.pods(ctx, t, ns, job)
		var have []string
		for n, p := range got {
			if p.DeletionTimestamp == nil {
				have = append(have, n)
			}
		}
		if len(have) != len(names) || len(got) != len(names) {
			return false, fmt.Sprintf("have %v", have), nil
		}
		for _, n := range names {
			if got[n] == nil {
				return false, fmt.Sprintf("have %v", have), nil
			}
		}
		return true, "", nil
	})
	return got
}

// setPod writes pod status as a kubelet would: phase, and a terminated (or
// running) state for every container, with exit code for those named in
// codes (0 for the others once the pod has ended).
func (e *env) setPod(ctx context.Context, t *testing.T, pod *corev1.Pod, phase corev1.PodPhase, codes map[string]int32) {
	t.Helper()
	p := &corev1.Pod{}
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = phase
	p.Status.ContainerStatuses = nil
	ready := corev1.ConditionFalse
	if phase == corev1.PodRunning {
		ready = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.Now()}}
	for _, c := range p.Spec.Containers {
		s := corev1.ContainerStatus{Name: c.Name, Image: c.Image}
		switch phase {
		case corev1.PodRunning:
			s.Ready = true
			s.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.Now()}
		case corev1.PodSucceeded, corev1.PodFailed:
			s.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: codes[c.Name], Reason: "Completed", FinishedAt: metav1.Now()}
			if codes[c.Name] != 0 {
				s.State.Terminated.Reason = "Error"
			}
		default:
			s.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, s)
	}
	if err := e.c.Status().Update(ctx, p); err != nil {
		t.Fatalf("setting pod %s %s: %v", p.Name, phase, err)
	}
}

// runAll marks every live pod of the job Running.
func (e *env) runAll(ctx context.Context, t *testing.T, ns, job string) {
	t.Helper()
	for _, p := range e.pods(ctx, t, ns, job) {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodRunning {
			e.setPod(ctx, t, p, corev1.PodRunning, nil)
		}
	}
}

// object gets a job by name.
func (e *env) get(ctx context.Context, t *testing.T, obj client.Object) {
	t.Helper()
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
}

// statusOf returns the common status of a job of any kind.
func statusOf(obj client.Object) *batchv1beta1.JobStatus {
	switch j := obj.(type) {
	case *batchv1beta1.GenericJob:
		return &j.Status
	case *batchv1beta1.PyTorchTrainingJob:
		return &j.Status.JobStatus
	case *batchv1beta1.TensorFlowTrainingJob:
		return &j.Status.JobStatus
	case *batchv1beta1.XGBoostTrainingJob:
		return &j.Status.JobStatus
	case *batchv1beta1.MPIJob:
		return &j.Status
	case *batchv1beta1.DeepSpeedJob:
		return &j.Status.JobStatus
	case *batchv1beta1.ColossalAIJob:
		return &j.Status
	}
	panic(fmt.Sprintf("not a job: %T", obj))
}

// waitPhase waits until the job reaches phase and returns its status.
func (e *env) waitPhase(ctx context.Context, t *testing.T, obj client.Object, phase batchv1beta1.JobPhase) *batchv1beta1.JobStatus {
	t.Helper()
	testutil.Poll(ctx, t, fmt.Sprintf("%s phase %s", obj.GetName(), phase), func() (bool, string, error) {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, "", err
		}
		s := statusOf(obj)
		return s.Phase == phase, fmt.Sprintf("phase %q conditions %+v", s.Phase, s.Conditions), nil
	})
	return statusOf(obj)
}

// condition returns condition typ of s, failing the test without it.
func condition(t *testing.T, s *batchv1beta1.JobStatus, typ batchv1beta1.JobConditionType) batchv1beta1.JobCondition {
	t.Helper()
	c := jobs.Condition(s, typ)
	if c == nil {
		t.Fatalf("no %s condition in %+v", typ, s.Conditions)
	}
	return *c
}

// container returns a plain container.
func container(name string, command ...string) corev1.Container {
	return corev1.Container{Name: name, Image: "busybox", Command: command}
}

// template returns a pod template of the containers.
func template(cs ...corev1.Container) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: cs}}
}

// update gets obj afresh, applies change and writes it, again while the
// controller's status writes make the version stale. It returns the error
// of the last write.
func (e *env) update(ctx context.Context, t *testing.T, obj client.Object, change func()) error {
	t.Helper()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return e.c.Update(ctx, obj)
	})
}

// waitEvent waits for an event about job with reason and a note containing
// note.
func (e *env) waitEvent(ctx context.Context, t *testing.T, ns, job, reason, note string) {
	t.Helper()
	testutil.Poll(ctx, t, reason+" event", func() (bool, string, error) {
		var list eventsv1.EventList
		if err := e.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.Regarding.Name == job && ev.Reason == reason {
				if strings.Contains(ev.Note, note) {
					return true, "", nil
				}
				seen = append(seen, ev.Note)
			}
		}
		return false, fmt.Sprintf("%q", seen), nil
	})
}
