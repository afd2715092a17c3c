package serving

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/serving"
	"github.com/accelstack/accelstack/test/testutil"
)

// TestSimpleMLService runs the SimpleMLService tests against one control
// plane.
func TestSimpleMLService(t *testing.T) {
	e := startEnv(t, nil)
	t.Run("group", func(t *testing.T) {
		for name, test := range map[string]func(*testing.T){
			"TensorFlowS3":      e.testTensorFlowS3,
			"PyTorchPVCService": e.testPyTorchPVCService,
			"DownloadFailed":    e.testDownloadFailed,
			"Refused":           e.testSimpleRefused,
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				test(t)
			})
		}
	})
	e.checkLog(t, "simplemlservice")
}

// seedTensorFlow is the seed's TF Serving example with an S3 model.
func seedTensorFlow(ns, name string) *tensorstackv1beta1.SimpleMLService {
	return &tensorstackv1beta1.SimpleMLService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: tensorstackv1beta1.SimpleMLServiceSpec{
			Storage: &tensorstackv1beta1.ModelStorage{S3: &tensorstackv1beta1.S3ModelStorage{
				SecretRef: tensorstackv1beta1.SecretRef{Name: "s3-secret"}, URI: "s3://models/mnist/",
			}},
			TensorFlow: &tensorstackv1beta1.TensorFlowServer{Image: "t9kpublic/tensorflow-serving:2.6.0"},
		},
	}
}

// testTensorFlowS3: the Deployment runs TF Serving's command line on the
// downloaded model, the storage initializer takes the keys from the
// Secret, the default Service maps 80 to 8080, and the status has the
// address and both conditions.
func (e *env) testTensorFlowS3(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	s := seedTensorFlow(ns, "mnist")
	testutil.MustCreate(ctx, t, e.c, s)

	dep := waitObject(ctx, t, e, ns, "mnist", &appsv1.Deployment{}, nil)
	spec := dep.Spec.Template.Spec
	if ptr.Deref(dep.Spec.Replicas, 0) != 1 || !metav1.IsControlledBy(dep, s) {
		t.Errorf("replicas %v owners %+v", dep.Spec.Replicas, dep.OwnerReferences)
	}
	if len(spec.Containers) != 1 || len(spec.InitContainers) != 1 {
		t.Fatalf("containers %+v init %+v", spec.Containers, spec.InitContainers)
	}
	server, init := spec.Containers[0], spec.InitContainers[0]
	wantArgs := []string{"--port=9090", "--rest_api_port=8080", "--model_name=mnist", "--model_base_path=/var/lib/t9k/model"}
	if diff := cmp.Diff(wantArgs, server.Args); diff != "" || server.Command[0] != "/usr/bin/tensorflow_model_server" {
		t.Errorf("server command %v args (-want +got):\n%s", server.Command, diff)
	}
	if init.Name != serving.StorageInitializerName || init.Image == "" {
		t.Errorf("init container %+v", init)
	}
	secretKeys := map[string]bool{}
	for _, ev := range init.Env {
		if ref := ev.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
			if ref.SecretKeyRef.Name != "s3-secret" {
				t.Errorf("env %s from Secret %s", ev.Name, ref.SecretKeyRef.Name)
			}
			secretKeys[ref.SecretKeyRef.Key] = true
		}
	}
	if diff := cmp.Diff(map[string]bool{"endpoint": true, "accessKeyID": true, "secretAccessKey": true}, secretKeys); diff != "" {
		t.Errorf("secret keys (-want +got):\n%s", diff)
	}
	if m := server.VolumeMounts; len(m) != 1 || m[0].MountPath != "/var/lib/t9k/model" || !m[0].ReadOnly {
		t.Errorf("server mounts %+v", m)
	}

	svc := waitObject(ctx, t, e, ns, "mnist", &corev1.Service{}, nil)
	if p := svc.Spec.Ports; len(p) != 1 || p[0].Port != 80 || p[0].TargetPort != intstr.FromInt32(8080) || svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("Service ports %+v type %s", p, svc.Spec.Type)
	}
	pod := e.createPod(ctx, t, dep, "mnist-pod")
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{
		Name: serving.StorageInitializerName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}},
	}}
	if err := e.c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	e.setDeploymentAvailable(ctx, t, ns, "mnist", 1)
	got := waitObject(ctx, t, e, ns, "mnist", &tensorstackv1beta1.SimpleMLService{}, func(s *tensorstackv1beta1.SimpleMLService) bool {
		c, d := interactive.FindCondition(s.Status.Conditions, "Ready"), interactive.FindCondition(s.Status.Conditions, "ModelDownloaded")
		return c != nil && c.Status == corev1.ConditionTrue && d != nil && d.Status == corev1.ConditionTrue
	})
	if ready := interactive.FindCondition(got.Status.Conditions, "Ready"); ready.Reason != "MinimumReplicasAvailable" {
		t.Errorf("Ready %+v", ready)
	}
	want := &tensorstackv1beta1.SimpleMLServiceAddress{URL: "mnist." + ns + ".svc.cluster.local", Ports: []tensorstackv1beta1.AddressPort{{Port: 80, Protocol: corev1.ProtocolTCP}}}
	if diff := cmp.Diff(want, got.Status.Address); diff != "" {
		t.Errorf("address (-want +got):\n%s", diff)
	}
}

// testPyTorchPVCService: TorchServe's command line on a PVC model at a
// sub path, three replicas, a NodePort Service, and a queue.
func (e *env) testPyTorchPVCService(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	s := &tensorstackv1beta1.SimpleMLService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "torch"},
		Spec: tensorstackv1beta1.SimpleMLServiceSpec{
			Replicas:  ptr.To[int32](3),
			Scheduler: &tensorstackv1beta1.SchedulePolicy{T9kScheduler: &tensorstackv1beta1.T9kScheduler{Queue: "default"}},
			Storage: &tensorstackv1beta1.ModelStorage{PVC: &tensorstackv1beta1.PVCModelStorage{
				Name: "models", SubPath: "mnist/store", MountPath: "/models",
			}},
			PyTorch: &tensorstackv1beta1.PyTorchServer{Image: "t9kpublic/pytorch-serve:0.4.1-cpu", ModelsFlag: "mnist=mnist.mar  cifar=cifar.mar"},
			Service: &tensorstackv1beta1.ServiceOption{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080)}}},
		},
	}
	testutil.MustCreate(ctx, t, e.c, s)
	dep := waitObject(ctx, t, e, ns, "torch", &appsv1.Deployment{}, nil)
	spec := dep.Spec.Template.Spec
	wantArgs := []string{"--start", "--model-store=/models", "--models", "mnist=mnist.mar", "cifar=cifar.mar"}
	if diff := cmp.Diff(wantArgs, spec.Containers[0].Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if m := spec.Containers[0].VolumeMounts; len(m) != 1 || m[0].SubPath != "mnist/store" || m[0].MountPath != "/models" {
		t.Errorf("mounts %+v", m)
	}
	if v := spec.Volumes; len(v) != 1 || v[0].PersistentVolumeClaim == nil || v[0].PersistentVolumeClaim.ClaimName != "models" || len(spec.InitContainers) != 0 {
		t.Errorf("volumes %+v init %+v", v, spec.InitContainers)
	}
	if ptr.Deref(dep.Spec.Replicas, 0) != 3 || spec.SchedulerName != "t9k-scheduler" {
		t.Errorf("replicas %v scheduler %q", dep.Spec.Replicas, spec.SchedulerName)
	}
	got := waitObject(ctx, t, e, ns, "torch", &tensorstackv1beta1.SimpleMLService{}, func(s *tensorstackv1beta1.SimpleMLService) bool {
		return s.Status.Address != nil && len(s.Status.Address.Ports) == 1 && s.Status.Address.Ports[0].NodePort != 0
	})
	if d := interactive.FindCondition(got.Status.Conditions, "ModelDownloaded"); d == nil || d.Status != corev1.ConditionTrue || d.Reason != serving.ReasonPVCMounted {
		t.Errorf("ModelDownloaded %+v", d)
	}
	if r := interactive.FindCondition(got.Status.Conditions, "Ready"); r == nil || r.Status != corev1.ConditionFalse {
		t.Errorf("Ready %+v", r)
	}
}

// testDownloadFailed: a failing storage initializer leaves ModelDownloaded
// False with the executor's error, without the Secret's values.
func (e *env) testDownloadFailed(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	testutil.MustCreate(ctx, t, e.c, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3-secret"},
		StringData: map[string]string{"endpoint": "http://s3:9000", "accessKeyID": "AKIDEXAMPLE", "secretAccessKey": "sekrit-value"},
	})
	testutil.MustCreate(ctx, t, e.c, seedTensorFlow(ns, "broken"))
	dep := waitObject(ctx, t, e, ns, "broken", &appsv1.Deployment{}, nil)
	pod := e.createPod(ctx, t, dep, "broken-pod")
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{
			Name:  serving.StorageInitializerName,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 1, Reason: "Error", Message: `{"bytes":0,"files":0,"durationSeconds":0.1,"error":"s3://models/mnist/: the bucket models does not exist"}`,
			}},
		}}
		return e.c.Status().Update(ctx, pod)
	})
	if err != nil {
		t.Fatal(err)
	}
	got := waitObject(ctx, t, e, ns, "broken", &tensorstackv1beta1.SimpleMLService{}, func(s *tensorstackv1beta1.SimpleMLService) bool {
		c := interactive.FindCondition(s.Status.Conditions, "ModelDownloaded")
		return c != nil && c.Reason == serving.ReasonDownloadFailed
	})
	c := interactive.FindCondition(got.Status.Conditions, "ModelDownloaded")
	if c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "the bucket models does not exist") {
		t.Errorf("ModelDownloaded %+v", c)
	}
	if strings.Contains(e.controllers.Log(), "sekrit-value") || strings.Contains(c.Message, "sekrit") {
		t.Error("the secret key leaked")
	}
}

// testSimpleRefused: the API server refuses specs that cannot run, naming
// the field.
func (e *env) testSimpleRefused(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t)
	for _, tc := range []struct {
		name, want string
		edit       func(*tensorstackv1beta1.SimpleMLService)
	}{
		{"no framework", "exactly one of tensorflow, pytorch or custom", func(s *tensorstackv1beta1.SimpleMLService) { s.Spec.TensorFlow = nil }},
		{"two frameworks", "exactly one of tensorflow, pytorch or custom", func(s *tensorstackv1beta1.SimpleMLService) {
			s.Spec.PyTorch = &tensorstackv1beta1.PyTorchServer{Image: "torchserve"}
		}},
		{"relative mountPath", "spec.storage.s3.mountPath", func(s *tensorstackv1beta1.SimpleMLService) { s.Spec.Storage.S3.MountPath = "models" }},
		{"unknown scheme", "spec.storage.s3.uri", func(s *tensorstackv1beta1.SimpleMLService) { s.Spec.Storage.S3.URI = "gs://models/mnist" }},
		{"subPath with ..", "spec.storage.pvc.subPath", func(s *tensorstackv1beta1.SimpleMLService) {
			s.Spec.Storage = &tensorstackv1beta1.ModelStorage{PVC: &tensorstackv1beta1.PVCModelStorage{Name: "p", SubPath: "a/../../etc"}}
		}},
		{"both storages", "exactly one of pvc or s3", func(s *tensorstackv1beta1.SimpleMLService) {
			s.Spec.Storage.PVC = &tensorstackv1beta1.PVCModelStorage{Name: "p"}
		}},
		{"models flag", "spec.pytorch.modelsFlag", func(s *tensorstackv1beta1.SimpleMLService) {
			s.Spec.TensorFlow = nil
			s.Spec.PyTorch = &tensorstackv1beta1.PyTorchServer{Image: "torchserve", ModelsFlag: "m=m.mar;rm -rf /"}
		}},
	} {
		s := seedTensorFlow(ns, "refused")
		tc.edit(s)
		err := e.c.Create(ctx, s)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error naming %q", tc.name, err, tc.want)
		}
		if err == nil {
			_ = e.c.Delete(context.Background(), s)
		}
	}
}
