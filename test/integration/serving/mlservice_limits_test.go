package serving

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/serving/mlservice"
	"github.com/accelstack/accelstack/test/testutil"
)

// oneRelease is an MLService with the one release a of runtime rt.
func oneRelease(ns, name, rt string, params map[string]string) *tensorstackv1beta1.MLService {
	return &tensorstackv1beta1.MLService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: tensorstackv1beta1.MLServiceSpec{Default: "a", Releases: []tensorstackv1beta1.ReleaseSpec{{
			Name: "a", Predictor: tensorstackv1beta1.PredictorSpec{Model: &tensorstackv1beta1.ModelSpec{Runtime: rt, Parameters: params}},
		}}},
	}
}

// testHostileArgs: a runtime whose arg would write 10 GB if executed as a
// Go template, and a release whose parameter expands to 64 MB, do not run:
// their status, Ready condition and a Warning event say why. A normal
// MLService created afterwards still gets its predictor from the same
// controllers.
func (e *env) testHostileArgs(t *testing.T, knative bool) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	hostile := torchRuntime(ns, "hostile", true)
	hostile.Spec.Template.Spec.Containers[0].Args = []string{"torchserve", "{{range 1000000000}}xxxxxxxxxx{{end}}"}
	testutil.MustCreate(ctx, t, e.c, hostile)
	testutil.MustCreate(ctx, t, e.c, torchRuntime(ns, "torchserve", true))
	testutil.MustCreate(ctx, t, e.c, oneRelease(ns, "range", "hostile", nil))
	amplified := oneRelease(ns, "amplified", "torchserve", map[string]string{"P": strings.Repeat("x", 64<<10)})
	patch, _ := json.Marshal(map[string]any{"containers": []any{
		map[string]any{"name": "user-container", "args": []string{strings.Repeat("{{.P}}", 1000)}},
	}})
	amplified.Spec.Releases[0].Predictor.Template = &tensorstackv1beta1.ServingPodTemplate{Spec: &runtime.RawExtension{Raw: patch}}
	testutil.MustCreate(ctx, t, e.c, amplified)

	for name, reason := range map[string]string{"range": mlservice.ReasonInvalidArgs, "amplified": mlservice.ReasonArgsTooLong} {
		m := waitObject(ctx, t, e, ns, name, &tensorstackv1beta1.MLService{}, func(m *tensorstackv1beta1.MLService) bool {
			c := interactive.FindCondition(m.Status.Conditions, "Ready")
			return c != nil && c.Reason == reason
		})
		c := interactive.FindCondition(m.Status.Conditions, "Ready")
		if c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "container user-container args[") || len(c.Message) > 1024 {
			t.Errorf("%s: Ready %s, message of %d bytes: %.300s", name, c.Status, len(c.Message), c.Message)
		}
		if len(m.Status.Releases) != 1 || m.Status.Releases[0].Reason != reason {
			t.Errorf("%s: releases %+v", name, m.Status.Releases)
		}
		e.waitEvent(ctx, t, ns, name, reason)
	}

	testutil.MustCreate(ctx, t, e.c, oneRelease(ns, "after", "torchserve", map[string]string{"MODEL_PATH": "mnist=model.mar"}))
	var pod corev1.PodSpec
	if knative {
		pod = knativePod(t, waitObject(ctx, t, e, ns, "after-predict-a", knativeService(), nil))
	} else {
		pod = waitObject(ctx, t, e, ns, "after-predict-a", &appsv1.Deployment{}, nil).Spec.Template.Spec
	}
	if got := pod.Containers[0].Args[3]; got != "--models mnist=model.mar" {
		t.Errorf("the normal MLService's arg %q", got)
	}
	for _, name := range []string{"range-predict-a", "amplified-predict-a"} {
		var obj client.Object = &appsv1.Deployment{}
		if knative {
			obj = knativeService()
		}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err == nil {
			t.Errorf("%s was created", name)
		}
	}
}

// waitEvent waits for an event of reason about the object named regarding.
func (e *env) waitEvent(ctx context.Context, t *testing.T, ns, regarding, reason string) {
	t.Helper()
	testutil.Poll(ctx, t, "event "+reason+" of "+regarding, func() (bool, string, error) {
		var list eventsv1.EventList
		if err := e.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.Regarding.Name == regarding && ev.Reason == reason && ev.Type == corev1.EventTypeWarning {
				return true, "", nil
			}
			seen = append(seen, ev.Regarding.Name+"/"+ev.Reason)
		}
		return false, strings.Join(seen, ", "), nil
	})
}

// testLongName: an MLService of a real user's name of 33 characters, with
// a release name of 30, is accepted; its Deployments and Services get
// names Kubernetes accepts and its status the URLs, which name them.
func (e *env) testLongName(t *testing.T, knative bool) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	const name, long = "llama2-7b-chat-triton-tensorrtllm", "release-with-a-name-of-30-char"
	testutil.MustCreate(ctx, t, e.c, torchRuntime(ns, "triton", true))
	m := seedMLService(ns, name, "triton")
	m.Spec.Releases[1].Name, m.Spec.Canary = long, long
	testutil.MustCreate(ctx, t, e.c, m)

	m = waitObject(ctx, t, e, ns, name, &tensorstackv1beta1.MLService{}, func(m *tensorstackv1beta1.MLService) bool {
		return m.Status.Address != nil && len(m.Status.Releases) == 2
	})
	if want := "http://" + name + "." + ns + ".svc.cluster.local"; m.Status.Address.URL != want {
		t.Errorf("URL %s, want %s", m.Status.Address.URL, want)
	}
	waitObject(ctx, t, e, ns, name, &corev1.Service{}, nil)
	for _, r := range m.Status.Releases {
		host, _, _ := strings.Cut(strings.TrimPrefix(r.URL, "http://"), ".")
		if errs := validation.IsDNS1035Label(host); len(errs) > 0 || !strings.HasPrefix(host, "llama2-7b-chat-") {
			t.Errorf("release %s: URL %s: %v", r.Name, r.URL, errs)
			continue
		}
		if knative {
			waitObject(ctx, t, e, ns, host, knativeService(), nil)
			continue
		}
		waitObject(ctx, t, e, ns, host, &appsv1.Deployment{}, nil)
		waitObject(ctx, t, e, ns, host, &corev1.Service{}, nil)
		e.setDeploymentAvailable(ctx, t, ns, host, 1)
	}
	if knative {
		return
	}
	router := waitObject(ctx, t, e, ns, name+"-router", &appsv1.Deployment{}, nil)
	e.setDeploymentAvailable(ctx, t, ns, router.Name, 1)
	m = waitObject(ctx, t, e, ns, name, &tensorstackv1beta1.MLService{}, func(m *tensorstackv1beta1.MLService) bool {
		c := interactive.FindCondition(m.Status.Conditions, "Ready")
		return c != nil && c.Status == corev1.ConditionTrue
	})
	if r := m.Status.Releases; !r[0].Ready || !r[1].Ready || ptr.Deref(m.Spec.CanaryTrafficPercent, 0) != r[1].TrafficPercent {
		t.Errorf("releases %+v", r)
	}
}
