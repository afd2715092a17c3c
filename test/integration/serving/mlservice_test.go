package serving

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/serving"
	"github.com/accelstack/accelstack/pkg/serving/mlservice"
	"github.com/accelstack/accelstack/pkg/serving/routerconfig"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// TestMLServiceRaw runs the MLService tests on the raw backend.
func TestMLServiceRaw(t *testing.T) {
	e := startEnv(t, nil)
	e.runMLService(t, false)
}

// TestMLServiceKnative runs the MLService tests with the Knative Service
// CRD installed, so that the controller chooses the knative backend.
func TestMLServiceKnative(t *testing.T) {
	e := startEnv(t, func(cp *harness.ControlPlane) {
		if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{
			Paths: []string{filepath.Join("testdata", "knative-service-crd.yaml")}, ErrorIfPathMissing: true,
		}); err != nil {
			t.Fatal(err)
		}
	})
	e.runMLService(t, true)
}

// runMLService runs every MLService test against e.
func (e *env) runMLService(t *testing.T, knative bool) {
	t.Run("group", func(t *testing.T) {
		for name, test := range map[string]func(*testing.T, bool){
			"ReleasesCanaryPause": e.testReleases,
			"Runtimes":            e.testRuntimes,
			"Refused":             e.testMLServiceRefused,
			"HostileArgs":         e.testHostileArgs,
			"LongName":            e.testLongName,
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				test(t, knative)
			})
		}
	})
	e.checkLog(t, "mlservice")
}

// torchRuntime is the seed's torchserve runtime.
func torchRuntime(ns, name string, enabled bool) *tensorstackv1beta1.MLServiceRuntime {
	return &tensorstackv1beta1.MLServiceRuntime{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: tensorstackv1beta1.MLServiceRuntimeSpec{
			Enabled: ptr.To(enabled),
			Template: tensorstackv1beta1.RuntimeTemplate{
				Metadata: tensorstackv1beta1.ServingPodMeta{Labels: map[string]string{"runtime": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "user-container", Image: "t9kpublic/pytorch-serve:0.4.1-cpu",
					Args:      []string{"torchserve", "--start", "--model-store=/var/lib/t9k/model", "--models {{if .MODEL_PATH}}{{.MODEL_PATH}}{{else}}all{{end}}", "--batch={{.BATCH}}"},
					Ports:     []corev1.ContainerPort{{ContainerPort: 8080}},
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
				}}},
			},
		},
	}
}

// seedMLService has releases a (a PVC model, autoscaled 1-3, a template
// patch) and b (an S3 model, a logger), default a and canary b at 20%.
func seedMLService(ns, name, runtimeName string) *tensorstackv1beta1.MLService {
	patch, _ := json.Marshal(map[string]any{"containers": []any{
		map[string]any{"name": "user-container", "image": "registry.example.com/torchserve:custom", "args": []string{"serve", "{{.MODEL_PATH}}"}},
		map[string]any{"name": "metrics", "image": "registry.example.com/metrics:1"},
	}})
	return &tensorstackv1beta1.MLService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: tensorstackv1beta1.MLServiceSpec{
			Default: "a", Canary: "b", CanaryTrafficPercent: ptr.To[int32](20),
			Releases: []tensorstackv1beta1.ReleaseSpec{
				{Name: "a", Predictor: tensorstackv1beta1.PredictorSpec{
					Model:       &tensorstackv1beta1.ModelSpec{Runtime: runtimeName, Parameters: map[string]string{"BATCH": "8", "MODEL_PATH": "mnist=model.mar"}},
					Storage:     &tensorstackv1beta1.ModelStorage{PVC: &tensorstackv1beta1.PVCModelStorage{Name: "models", SubPath: "mnist"}},
					MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](3),
					Template: &tensorstackv1beta1.ServingPodTemplate{Spec: &runtime.RawExtension{Raw: patch}},
				}},
				{Name: "b", Predictor: tensorstackv1beta1.PredictorSpec{
					Model: &tensorstackv1beta1.ModelSpec{Runtime: runtimeName},
					Storage: &tensorstackv1beta1.ModelStorage{S3: &tensorstackv1beta1.S3ModelStorage{
						SecretRef: tensorstackv1beta1.SecretRef{Name: "s3"}, URI: "s3://models/mnist-v2/", MountPath: "/models",
					}},
					ContainersResources: []tensorstackv1beta1.ContainerResources{{Name: "user-container", Resources: corev1.ResourceRequirements{
						Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
					}}},
					Logger: &tensorstackv1beta1.LoggerSpec{URLs: []string{"http://sink.logs.svc/events"}},
				}},
			},
		},
	}
}

// testReleases: each release runs from the runtime with the template
// merged by the seed's rules, the router splits 80/20, the status shows
// the traffic and URLs, and pause scales everything to zero.
func (e *env) testReleases(t *testing.T, knative bool) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	testutil.MustCreate(ctx, t, e.c, torchRuntime(ns, "torchserve", true))
	testutil.MustCreate(ctx, t, e.c, seedMLService(ns, "mnist", "torchserve"))

	var podA, podB corev1.PodSpec
	if knative {
		a := waitObject(ctx, t, e, ns, "mnist-predict-a", knativeService(), nil)
		podA = knativePod(t, a)
		b := waitObject(ctx, t, e, ns, "mnist-predict-b", knativeService(), nil)
		podB = knativePod(t, b)
		ann, _, _ := unstructured.NestedStringMap(a.Object, "spec", "template", "metadata", "annotations")
		if ann["autoscaling.knative.dev/min-scale"] != "1" || ann["autoscaling.knative.dev/max-scale"] != "3" {
			t.Errorf("annotations %v", ann)
		}
		for _, k := range []*unstructured.Unstructured{a, b} {
			e.setKnativeReady(ctx, t, k, "http://"+k.GetName()+"."+ns+".example.com")
		}
	} else {
		a := waitObject(ctx, t, e, ns, "mnist-predict-a", &appsv1.Deployment{}, nil)
		podA = a.Spec.Template.Spec
		podB = waitObject(ctx, t, e, ns, "mnist-predict-b", &appsv1.Deployment{}, nil).Spec.Template.Spec
		hpa := waitObject(ctx, t, e, ns, "mnist-predict-a", &autoscalingv2.HorizontalPodAutoscaler{}, nil)
		if ptr.Deref(hpa.Spec.MinReplicas, 0) != 1 || hpa.Spec.MaxReplicas != 3 || hpa.Spec.ScaleTargetRef.Name != "mnist-predict-a" {
			t.Errorf("HPA %+v", hpa.Spec)
		}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mnist-predict-b"}, &autoscalingv2.HorizontalPodAutoscaler{}); !apierrors.IsNotFound(err) {
			t.Errorf("release b has fixed replicas, yet an HPA: %v", err)
		}
		for _, n := range []string{"mnist-predict-a-private", "mnist-predict-b-private", "mnist-predict-a", "mnist-predict-b"} {
			waitObject(ctx, t, e, ns, n, &corev1.Service{}, nil)
		}
		// The router reaches the pods through headless Services, at their
		// own port: no kube-proxy needed between them.
		for _, n := range []string{"mnist-predict-a-private", "mnist-predict-b-private"} {
			svc := waitObject(ctx, t, e, ns, n, &corev1.Service{}, nil)
			if svc.Spec.ClusterIP != corev1.ClusterIPNone || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 {
				t.Errorf("Service %s: clusterIP %q ports %+v, want headless on 8080", n, svc.Spec.ClusterIP, svc.Spec.Ports)
			}
		}
		e.setDeploymentAvailable(ctx, t, ns, "mnist-predict-a", 1)
		e.setDeploymentAvailable(ctx, t, ns, "mnist-predict-b", 1)
	}
	// Strategic merge: the container merged by name (image overridden,
	// args replaced and rendered), the new one appended; resources kept.
	if len(podA.Containers) != 2 || podA.Containers[1].Name != "metrics" {
		t.Fatalf("release a containers %+v", podA.Containers)
	}
	ca := podA.Containers[0]
	if diff := cmp.Diff([]string{"serve", "mnist=model.mar"}, ca.Args); diff != "" || ca.Image != "registry.example.com/torchserve:custom" || ca.Resources.Limits.Cpu().String() != "1" {
		t.Errorf("release a container image %s resources %v args (-want +got):\n%s", ca.Image, ca.Resources.Limits, diff)
	}
	cb := podB.Containers[0]
	wantArgs := []string{"torchserve", "--start", "--model-store=/var/lib/t9k/model", "--models all", "--batch="}
	if diff := cmp.Diff(wantArgs, cb.Args); diff != "" || cb.Resources.Limits.Cpu().String() != "2" {
		t.Errorf("release b resources %v args (-want +got):\n%s", cb.Resources.Limits, diff)
	}
	if len(podB.InitContainers) != 1 || podB.InitContainers[0].Name != serving.StorageInitializerName {
		t.Errorf("release b init containers %+v", podB.InitContainers)
	}

	dep := waitObject(ctx, t, e, ns, "mnist-router", &appsv1.Deployment{}, nil)
	cfg, err := routerconfig.ParseConfig([]byte(dep.Spec.Template.Spec.Containers[0].Env[0].Value))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Releases) != 2 || cfg.Releases[0].Weight != 80 || cfg.Releases[1].Weight != 20 || cfg.Releases[1].Logger == nil || cfg.Releases[0].Logger != nil {
		t.Errorf("router config %+v", cfg)
	}
	if !knative {
		if want := "http://mnist-predict-a-private." + ns + ".svc.cluster.local:8080"; cfg.Releases[0].URL != want {
			t.Errorf("release a's router target %s, want %s", cfg.Releases[0].URL, want)
		}
	}
	for _, n := range []string{"mnist", "mnist-predict"} {
		waitObject(ctx, t, e, ns, n, &corev1.Service{}, nil)
	}
	e.setDeploymentAvailable(ctx, t, ns, "mnist-router", 1)
	m := waitObject(ctx, t, e, ns, "mnist", &tensorstackv1beta1.MLService{}, func(m *tensorstackv1beta1.MLService) bool {
		c := interactive.FindCondition(m.Status.Conditions, "Ready")
		return c != nil && c.Status == corev1.ConditionTrue
	})
	domain := "svc.cluster.local"
	if knative {
		domain = "example.com"
	}
	want := []tensorstackv1beta1.ReleaseStatus{
		{Name: "a", Ready: true, TrafficPercent: 80, URL: "http://mnist-predict-a." + ns + "." + domain},
		{Name: "b", Ready: true, TrafficPercent: 20, URL: "http://mnist-predict-b." + ns + "." + domain},
	}
	got := m.Status.Releases
	for i := range got {
		got[i].ReadyReplicas, got[i].TotalReplicas = 0, 0
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("releases (-want +got):\n%s", diff)
	}
	if m.Status.Address == nil || m.Status.Address.URL != "http://mnist."+ns+".svc.cluster.local" || m.Status.DefaultRelease != "a" || m.Status.CanaryRelease != "b" {
		t.Errorf("status %+v", m.Status)
	}
	if b := map[bool]string{true: "knative", false: "raw"}[knative]; m.Status.Backend != b {
		t.Errorf("backend %q, want %q", m.Status.Backend, b)
	}

	// Pause.
	e.updateMLService(ctx, t, ns, "mnist", func(m *tensorstackv1beta1.MLService) { m.Spec.RunMode = tensorstackv1beta1.MLServicePause })
	m = waitObject(ctx, t, e, ns, "mnist", &tensorstackv1beta1.MLService{}, func(m *tensorstackv1beta1.MLService) bool {
		c := interactive.FindCondition(m.Status.Conditions, "Paused")
		return c != nil && c.Status == corev1.ConditionTrue
	})
	if r := interactive.FindCondition(m.Status.Conditions, "Ready"); r.Status != corev1.ConditionFalse || r.Reason != "Paused" {
		t.Errorf("Ready %+v", r)
	}
	waitObject(ctx, t, e, ns, "mnist-router", &appsv1.Deployment{}, func(d *appsv1.Deployment) bool { return ptr.Deref(d.Spec.Replicas, 1) == 0 })
	var gone client.Object = &appsv1.Deployment{}
	if knative {
		gone = knativeService()
	}
	testutil.Poll(ctx, t, "release a deleted while paused", func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mnist-predict-a"}, gone)
		return apierrors.IsNotFound(err), "", client.IgnoreNotFound(err)
	})
	// Resume.
	e.updateMLService(ctx, t, ns, "mnist", func(m *tensorstackv1beta1.MLService) { m.Spec.RunMode = tensorstackv1beta1.MLServiceImmediate })
	waitObject(ctx, t, e, ns, "mnist", &tensorstackv1beta1.MLService{}, func(m *tensorstackv1beta1.MLService) bool {
		c := interactive.FindCondition(m.Status.Conditions, "Paused")
		return c != nil && c.Status == corev1.ConditionFalse
	})
	waitObject(ctx, t, e, ns, "mnist-router", &appsv1.Deployment{}, func(d *appsv1.Deployment) bool { return ptr.Deref(d.Spec.Replicas, 0) == 1 })
}

// testRuntimes: a release naming a missing or disabled runtime is not
// run and the Ready condition says why; creating the runtime fixes it.
func (e *env) testRuntimes(t *testing.T, _ bool) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	testutil.MustCreate(ctx, t, e.c, torchRuntime(ns, "off", false))
	missing := seedMLService(ns, "missing", "nope")
	missing.Spec.Canary, missing.Spec.CanaryTrafficPercent = "", nil
	testutil.MustCreate(ctx, t, e.c, missing)
	disabled := seedMLService(ns, "disabled", "off")
	testutil.MustCreate(ctx, t, e.c, disabled)
	for name, reason := range map[string]string{"missing": mlservice.ReasonRuntimeNotFound, "disabled": mlservice.ReasonRuntimeDisabled} {
		m := waitObject(ctx, t, e, ns, name, &tensorstackv1beta1.MLService{}, func(m *tensorstackv1beta1.MLService) bool {
			c := interactive.FindCondition(m.Status.Conditions, "Ready")
			return c != nil && c.Reason == reason
		})
		if c := interactive.FindCondition(m.Status.Conditions, "Ready"); c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "MLServiceRuntime") {
			t.Errorf("%s: Ready %+v", name, c)
		}
		if len(m.Status.Releases) != 2 || m.Status.Releases[0].Reason != reason {
			t.Errorf("%s: releases %+v", name, m.Status.Releases)
		}
	}
	testutil.MustCreate(ctx, t, e.c, torchRuntime(ns, "nope", true))
	waitObject(ctx, t, e, ns, "missing", &tensorstackv1beta1.MLService{}, func(m *tensorstackv1beta1.MLService) bool {
		c := interactive.FindCondition(m.Status.Conditions, "Ready")
		return c != nil && c.Reason != mlservice.ReasonRuntimeNotFound
	})
}

// testMLServiceRefused: the API server refuses specs that cannot run,
// naming the field.
func (e *env) testMLServiceRefused(t *testing.T, _ bool) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	for _, tc := range []struct {
		name, want string
		edit       func(*tensorstackv1beta1.MLService)
	}{
		{"default names no release", "spec.default", func(m *tensorstackv1beta1.MLService) { m.Spec.Default = "c" }},
		{"canary names no release", "spec.canary", func(m *tensorstackv1beta1.MLService) { m.Spec.Canary = "c" }},
		{"percent 100", "spec.canaryTrafficPercent", func(m *tensorstackv1beta1.MLService) { m.Spec.CanaryTrafficPercent = ptr.To[int32](100) }},
		{"percent 0", "spec.canaryTrafficPercent", func(m *tensorstackv1beta1.MLService) { m.Spec.CanaryTrafficPercent = ptr.To[int32](0) }},
		{"percent without canary", "spec.canaryTrafficPercent", func(m *tensorstackv1beta1.MLService) { m.Spec.Canary = "" }},
		{"unknown scheme", "spec.releases[1].predictor.storage.s3.uri", func(m *tensorstackv1beta1.MLService) {
			m.Spec.Releases[1].Predictor.Storage.S3.URI = "hdfs://models/x"
		}},
		{"relative mountPath", "spec.releases[1].predictor.storage.s3.mountPath", func(m *tensorstackv1beta1.MLService) {
			m.Spec.Releases[1].Predictor.Storage.S3.MountPath = "models"
		}},
		{"subPath with ..", "spec.releases[0].predictor.storage.pvc.subPath", func(m *tensorstackv1beta1.MLService) {
			m.Spec.Releases[0].Predictor.Storage.PVC.SubPath = "../x"
		}},
		{"logger URL", "spec.releases[1].predictor.logger.urls[0]", func(m *tensorstackv1beta1.MLService) {
			m.Spec.Releases[1].Predictor.Logger.URLs = []string{"file:///etc/passwd"}
		}},
	} {
		m := seedMLService(ns, "refused", "torchserve")
		tc.edit(m)
		err := e.c.Create(ctx, m)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error naming %q", tc.name, err, tc.want)
		}
		if err == nil {
			_ = e.c.Delete(context.Background(), m)
		}
	}
}

// knativeService returns an empty Knative Service.
func knativeService() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(mlservice.KnativeServiceGVK)
	return u
}

// knativePod returns the pod spec of a Knative Service's template.
func knativePod(t *testing.T, u *unstructured.Unstructured) corev1.PodSpec {
	t.Helper()
	m, _, _ := unstructured.NestedMap(u.Object, "spec", "template", "spec")
	var spec corev1.PodSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

// setKnativeReady writes a Ready status on the Knative Service u, as
// Knative would.
func (e *env) setKnativeReady(ctx context.Context, t *testing.T, u *unstructured.Unstructured, url string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := knativeService()
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			return err
		}
		got.Object["status"] = map[string]any{
			"observedGeneration": got.GetGeneration(),
			"url":                url,
			"address":            map[string]any{"url": "http://" + got.GetName() + "." + got.GetNamespace() + ".svc.cluster.local"},
			"conditions":         []any{map[string]any{"type": "Ready", "status": "True"}},
		}
		return e.c.Status().Update(ctx, got)
	})
	if err != nil {
		t.Fatalf("writing the status of Knative Service %s: %v", u.GetName(), err)
	}
}

// updateMLService changes the MLService ns/name with edit.
func (e *env) updateMLService(ctx context.Context, t *testing.T, ns, name string, edit func(*tensorstackv1beta1.MLService)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m := &tensorstackv1beta1.MLService{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
			return err
		}
		edit(m)
		return e.c.Update(ctx, m)
	})
	if err != nil {
		t.Fatalf("updating MLService %s: %v", name, err)
	}
}
