package interactive

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/tensorboard"
	"github.com/accelstack/accelstack/test/testutil"
)

// TestInteractive runs every test against one control plane.
func TestInteractive(t *testing.T) {
	e := startEnv(t)
	t.Run("TensorBoard", e.testTensorBoard)
	t.Run("TensorBoardS3", e.testTensorBoardS3)
	t.Run("TensorBoardMissingSecret", e.testTensorBoardMissingSecret)
	t.Run("TensorBoardRefused", e.testTensorBoardRefused)
	t.Run("TensorBoardCrashLoop", e.testTensorBoardCrashLoop)
	t.Run("Explorer", e.testExplorer)
	t.Run("ExplorerRefused", e.testExplorerRefused)
	t.Run("AccessSecretTaken", e.testAccessSecretTaken)
	e.controllerErrors(t, "tensorboard", "explorer")
}

// tensorBoard is the seed's TensorBoard example in ns, with a second PVC
// under logDir.
func tensorBoard(ns, name string) *tensorstackv1beta1.TensorBoard {
	return &tensorstackv1beta1.TensorBoard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: tensorstackv1beta1.TensorBoardSpec{
			Image:               "docker.mirrors.ustc.edu.cn/tensorflow/serving:2.6.0-gpu",
			TrainingLogFilesets: []string{"t9k://pvc/pytorchtrainingjob-tensorboard-pvc/log"},
			LogDir: &tensorstackv1beta1.TensorBoardDataSource{
				PVC: []tensorstackv1beta1.PVCDataSource{{Name: "more-logs", SubPath: []string{"a", "b"}}},
			},
		},
	}
}

// waitTensorBoard waits until cond holds of the TensorBoard ns/name and
// returns it.
func (e *env) waitTensorBoard(ctx context.Context, t *testing.T, ns, name string, cond func(*tensorstackv1beta1.TensorBoard) bool) *tensorstackv1beta1.TensorBoard {
	t.Helper()
	tb := &tensorstackv1beta1.TensorBoard{}
	testutil.Poll(ctx, t, "TensorBoard "+name, func() (bool, string, error) {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, tb); err != nil {
			return false, "", err
		}
		return cond(tb), fmt.Sprintf("status %+v", tb.Status), nil
	})
	return tb
}

// phase is a TensorBoard condition: the phase is p.
func phase(p tensorstackv1beta1.TensorBoardPhase) func(*tensorstackv1beta1.TensorBoard) bool {
	return func(tb *tensorstackv1beta1.TensorBoard) bool { return tb.Status.Phase == p }
}

// tbCondition returns the condition of type typ of tb, or a zero one.
func tbCondition(tb *tensorstackv1beta1.TensorBoard, typ tensorstackv1beta1.TensorBoardConditionType) tensorstackv1beta1.TensorBoardCondition {
	for _, c := range tb.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return tensorstackv1beta1.TensorBoardCondition{}
}

// container returns the container name of spec.
func container(t *testing.T, spec corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no container %s in %+v", name, spec.Containers)
	}
	return spec.Containers[i]
}

// checkService checks the Service ns/name: owned by owner, port 80 to the
// sidecar, selecting the pods by selector.
func (e *env) checkService(ctx context.Context, t *testing.T, ns, name string, owner metav1.Object, selector map[string]string) {
	t.Helper()
	svc := &corev1.Service{}
	testutil.Poll(ctx, t, "Service "+name, func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc)
		return err == nil, fmt.Sprint(err), nil
	})
	if !metav1.IsControlledBy(svc, owner) || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.String() != activity.HTTPPortName {
		t.Errorf("Service owners %v ports %+v", svc.OwnerReferences, svc.Spec.Ports)
	}
	if diff := cmp.Diff(selector, svc.Spec.Selector); diff != "" {
		t.Errorf("Service selector (-want +got):\n%s", diff)
	}
}

// testTensorBoard: the seed's TensorBoard gets a Deployment of TensorBoard
// over its PVCs, read-only, behind the sidecar, and a Service; its status
// follows the pod the test runs; suspend scales it to 0 and keeps the
// Service; the Idle condition the Resource Keeper writes stays.
func (e *env) testTensorBoard(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	tb := tensorBoard(ns, "pytorchtrainingjob-tensorboard")
	testutil.MustCreate(ctx, t, e.c, tb)
	name := tensorboard.ObjectName(tb.Name)
	if name != "pytorchtrainingjob-tensorboard-tensorboard" {
		t.Errorf("objects named %s", name)
	}

	dep := e.waitDeployment(ctx, t, ns, name, replicas(1))
	if !metav1.IsControlledBy(dep, tb) || dep.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("Deployment owners %v strategy %v", dep.OwnerReferences, dep.Spec.Strategy)
	}
	pod := dep.Spec.Template.Spec
	tbc := container(t, pod, tensorboard.ContainerName)
	wantArgs := []string{
		"--logdir_spec=more-logs/a:/t9k/logs/pvc/more-logs/a,more-logs/b:/t9k/logs/pvc/more-logs/b," +
			"pytorchtrainingjob-tensorboard-pvc/log:/t9k/logs/pvc/pytorchtrainingjob-tensorboard-pvc/log",
		"--host=127.0.0.1", "--port=6006", "--path_prefix=/tensorboard/" + ns + "/pytorchtrainingjob-tensorboard",
	}
	if tbc.Image != tb.Spec.Image || !cmp.Equal(tbc.Command, []string{"tensorboard"}) || !cmp.Equal(tbc.Args, wantArgs) {
		t.Errorf("TensorBoard image %s command %q args %q", tbc.Image, tbc.Command, tbc.Args)
	}
	for _, claim := range []string{"more-logs", "pytorchtrainingjob-tensorboard-pvc"} {
		i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool {
			return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim
		})
		if i < 0 || !pod.Volumes[i].PersistentVolumeClaim.ReadOnly {
			t.Fatalf("no read-only volume of PVC %s in %+v", claim, pod.Volumes)
		}
		m := slices.IndexFunc(tbc.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == pod.Volumes[i].Name })
		if m < 0 || !tbc.VolumeMounts[m].ReadOnly || tbc.VolumeMounts[m].MountPath != "/t9k/logs/pvc/"+claim {
			t.Errorf("mounts %+v", tbc.VolumeMounts)
		}
	}
	side := container(t, pod, activity.ContainerName)
	if side.Image != "ghcr.io/accelstack/activity-proxy:latest" || side.Args[0] != "--upstream=http://127.0.0.1:6006" {
		t.Errorf("sidecar image %s args %q", side.Image, side.Args)
	}
	if dep.Labels[tensorboard.LabelKey] != name || dep.Spec.Template.Labels[tensorboard.LabelKey] != name {
		t.Errorf("labels %v, template labels %v", dep.Labels, dep.Spec.Template.Labels)
	}
	e.checkService(ctx, t, ns, name, tb, map[string]string{tensorboard.LabelKey: name})
	testutil.CheckAccess(ctx, t, e.c, testutil.Access{
		Namespace: ns, Name: name, Owner: tb, Selector: map[string]string{tensorboard.LabelKey: name},
		Pod: dep.Spec.Template.Spec, Log: e.controllers.Log,
	})

	tb = e.waitTensorBoard(ctx, t, ns, tb.Name, phase(tensorstackv1beta1.TensorBoardPending))
	if tb.Status.URL != "http://"+name+"."+ns+".svc.cluster.local/tensorboard/"+ns+"/pytorchtrainingjob-tensorboard/" || tbCondition(tb, "Ready").Status != corev1.ConditionFalse {
		t.Errorf("url %q conditions %+v", tb.Status.URL, tb.Status.Conditions)
	}

	// The Resource Keeper's condition.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		e.get(ctx, t, ns, tb.Name, tb)
		tb.Status.Conditions = append(tb.Status.Conditions, tensorstackv1beta1.TensorBoardCondition{
			Type: tensorstackv1beta1.ConditionIdle, Status: corev1.ConditionFalse, Message: "requests seen", LastTransitionTime: metav1.Now(),
		})
		return e.c.Status().Update(ctx, tb)
	})
	if err != nil {
		t.Fatal(err)
	}

	running := e.runPod(ctx, t, dep, "", "")
	tb = e.waitTensorBoard(ctx, t, ns, tb.Name, phase(tensorstackv1beta1.TensorBoardRunning))
	want := &tensorstackv1beta1.PodStatus{Reference: tensorstackv1beta1.PodReference{Name: running.Name, UID: running.UID}, Phase: corev1.PodRunning}
	if diff := cmp.Diff(want, tb.Status.Pod); diff != "" {
		t.Errorf("status.pod (-want +got):\n%s", diff)
	}
	if c := tbCondition(tb, "Ready"); c.Status != corev1.ConditionTrue {
		t.Errorf("Ready %+v", c)
	}

	e.update(ctx, t, ns, tb.Name, tb, func() { tb.Spec.Suspend = true })
	e.waitDeployment(ctx, t, ns, name, replicas(0))
	tb = e.waitTensorBoard(ctx, t, ns, tb.Name, phase(tensorstackv1beta1.TensorBoardSuspended))
	e.deletePods(ctx, t, ns, tensorboard.LabelKey, name)
	tb = e.waitTensorBoard(ctx, t, ns, tb.Name, func(tb *tensorstackv1beta1.TensorBoard) bool { return tb.Status.Pod == nil })
	if c := tbCondition(tb, "Ready"); c.Status != corev1.ConditionFalse || !strings.HasPrefix(c.Message, "Suspended") {
		t.Errorf("Ready while suspended %+v", c)
	}
	e.get(ctx, t, ns, name, &corev1.Service{})

	e.update(ctx, t, ns, tb.Name, tb, func() { tb.Spec.Suspend = false })
	dep = e.waitDeployment(ctx, t, ns, name, replicas(1))
	e.waitTensorBoard(ctx, t, ns, tb.Name, phase(tensorstackv1beta1.TensorBoardPending))
	e.runPod(ctx, t, dep, "", "")
	tb = e.waitTensorBoard(ctx, t, ns, tb.Name, phase(tensorstackv1beta1.TensorBoardRunning))
	if c := tbCondition(tb, tensorstackv1beta1.ConditionIdle); c.Status != corev1.ConditionFalse || c.Message != "requests seen" {
		t.Errorf("the Idle condition became %+v", c)
	}
}

// testTensorBoardS3: S3 credentials reach the pod as secretKeyRef
// variables (S3-env) or a mounted file (S3-cfg), never as values.
func (e *env) testTensorBoardS3(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	testutil.MustCreate(ctx, t, e.c, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3-env", Labels: map[string]string{"tensorstack.dev/resource": "s3-env"}},
		StringData: map[string]string{"endpoint": "http://minio.example:9000", "accessKeyID": "AKIDSECRETVALUE", "secretAccessKey": "SECRETKEYVALUE"},
	})
	testutil.MustCreate(ctx, t, e.c, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3-cfg", Labels: map[string]string{"tensorstack.dev/resource": "s3-cfg"}},
		StringData: map[string]string{".s3cfg": "[default]\naccess_key = CFGKEYVALUE\nsecret_key = CFGSECRETVALUE\nhost_base = minio.example:9000\nuse_https = False\n"},
	})

	env := &tensorstackv1beta1.TensorBoard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3env"},
		Spec: tensorstackv1beta1.TensorBoardSpec{LogDir: &tensorstackv1beta1.TensorBoardDataSource{
			S3: &tensorstackv1beta1.S3DataSource{SecretRef: tensorstackv1beta1.SecretRef{Name: "s3-env"}, URI: []string{"s3://logs/run1"}},
		}},
	}
	testutil.MustCreate(ctx, t, e.c, env)
	dep := e.waitDeployment(ctx, t, ns, tensorboard.ObjectName(env.Name), nil)
	mustNotContain(t, dep, "AKIDSECRETVALUE", "SECRETKEYVALUE", "minio.example")
	tbc := container(t, dep.Spec.Template.Spec, tensorboard.ContainerName)
	if tbc.Image != tensorboard.DefaultImage || !slices.Contains(tbc.Args, "--logdir_spec=logs/run1:s3://logs/run1") {
		t.Errorf("image %s args %q", tbc.Image, tbc.Args)
	}
	refs := map[string]string{}
	for _, v := range tbc.Env {
		if v.ValueFrom != nil && v.ValueFrom.SecretKeyRef != nil && v.ValueFrom.SecretKeyRef.Name == "s3-env" {
			refs[v.Name] = v.ValueFrom.SecretKeyRef.Key
		}
	}
	wantRefs := map[string]string{"AWS_ACCESS_KEY_ID": "accessKeyID", "AWS_SECRET_ACCESS_KEY": "secretAccessKey", "S3_ENDPOINT": "endpoint", "AWS_REGION": "region"}
	if diff := cmp.Diff(wantRefs, refs); diff != "" {
		t.Errorf("secretKeyRef variables (-want +got):\n%s", diff)
	}

	cfg := &tensorstackv1beta1.TensorBoard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3cfg"},
		Spec:       tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{"t9k://minio/s3-cfg/logs/run2"}},
	}
	testutil.MustCreate(ctx, t, e.c, cfg)
	dep = e.waitDeployment(ctx, t, ns, tensorboard.ObjectName(cfg.Name), nil)
	mustNotContain(t, dep, "CFGKEYVALUE", "CFGSECRETVALUE", "minio.example")
	spec := dep.Spec.Template.Spec
	i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == "s3-cfg" })
	if i < 0 {
		t.Fatalf("no volume of the Secret s3-cfg in %+v", spec.Volumes)
	}
	tbc = container(t, spec, tensorboard.ContainerName)
	if !slices.ContainsFunc(tbc.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == spec.Volumes[i].Name && m.MountPath == tensorboard.S3CfgDir && m.ReadOnly
	}) {
		t.Errorf("mounts %+v", tbc.VolumeMounts)
	}
	if side := container(t, spec, activity.ContainerName); len(side.VolumeMounts) != 1 || side.VolumeMounts[0].Name != activity.AccessVolumeName || len(side.Env) > 0 {
		t.Errorf("the sidecar sees %+v %+v, want its access Secret only", side.VolumeMounts, side.Env)
	}
}

// testTensorBoardMissingSecret: a TensorBoard whose S3 Secret is missing
// waits, Pending with an event, and starts once the Secret exists.
func (e *env) testTensorBoardMissingSecret(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	tb := &tensorstackv1beta1.TensorBoard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "waits"},
		Spec:       tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{"t9k://minio/later/logs/run"}},
	}
	testutil.MustCreate(ctx, t, e.c, tb)
	tb = e.waitTensorBoard(ctx, t, ns, tb.Name, func(tb *tensorstackv1beta1.TensorBoard) bool {
		return strings.HasPrefix(tbCondition(tb, "Ready").Message, tensorboard.ReasonSecretNotFound)
	})
	if tb.Status.Phase != tensorstackv1beta1.TensorBoardPending {
		t.Errorf("phase %s", tb.Status.Phase)
	}
	e.waitEvent(ctx, t, ns, tb.Name, tensorboard.ReasonSecretNotFound)
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: tensorboard.ObjectName(tb.Name)}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Deployment without its Secret: %v", err)
	}
	testutil.MustCreate(ctx, t, e.c, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"},
		StringData: map[string]string{"endpoint": "http://minio:9000", "accessKeyID": "a", "secretAccessKey": "b"},
	})
	// Secrets are not watched: the controller looks again after SecretRetry.
	testutil.Eventually(ctx, t, tensorboard.SecretRetry+30*time.Second, "the Deployment once the Secret exists", func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: tensorboard.ObjectName(tb.Name)}, &appsv1.Deployment{})
		return err == nil, fmt.Sprint(err), nil
	})
}

// testTensorBoardRefused: the webhook refuses locations that are not
// ones, naming the field, and admits a suspend of a TensorBoard whose
// locations do not change.
func (e *env) testTensorBoardRefused(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	for _, tc := range []struct {
		name, fileset, want string
	}{
		{"scheme", "nfs://server/logs", `spec.trainingLogFilesets[0]: Invalid value: "nfs://server/logs": unsupported scheme`},
		{"kind", "t9k://nfs/server/logs", `spec.trainingLogFilesets[0]: Unsupported value: "nfs"`},
		{"traversal", "t9k://pvc/logs/../../etc", `spec.trainingLogFilesets[0]: Invalid value: "t9k://pvc/logs/../../etc": must not contain '..'`},
	} {
		tb := &tensorstackv1beta1.TensorBoard{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "refused-" + tc.name},
			Spec:       tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{tc.fileset}},
		}
		err := e.c.Create(ctx, tb)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
		}
	}
	s3 := &tensorstackv1beta1.TensorBoard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "refused-s3"},
		Spec: tensorstackv1beta1.TensorBoardSpec{LogDir: &tensorstackv1beta1.TensorBoardDataSource{
			S3: &tensorstackv1beta1.S3DataSource{SecretRef: tensorstackv1beta1.SecretRef{Name: "s"}, URI: []string{"s3://bucket/a/../../b"}},
		}},
	}
	if err := e.c.Create(ctx, s3); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.logDir.s3.uri[0]") {
		t.Errorf("S3 traversal: %v", err)
	}

	tb := tensorBoard(ns, "valid")
	testutil.MustCreate(ctx, t, e.c, tb)
	tb.Spec.LogDir.PVC[0].SubPath = []string{"../x"}
	if err := e.c.Update(ctx, tb); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.logDir.pvc[0].subPath[0]") {
		t.Errorf("update to a traversal: %v", err)
	}
	e.update(ctx, t, ns, tb.Name, tb, func() { tb.Spec.Suspend = true })
}

// testTensorBoardCrashLoop: a TensorBoard whose container cannot start is
// Failed, naming the container.
func (e *env) testTensorBoardCrashLoop(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	tb := tensorBoard(ns, "crashes")
	tb.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	testutil.MustCreate(ctx, t, e.c, tb)
	dep := e.waitDeployment(ctx, t, ns, tensorboard.ObjectName(tb.Name), nil)
	if res := container(t, dep.Spec.Template.Spec, tensorboard.ContainerName).Resources; !cmp.Equal(res, *tb.Spec.Resources) {
		t.Errorf("resources %+v", res)
	}
	e.runPod(ctx, t, dep, tensorboard.ContainerName, "CrashLoopBackOff")
	tb = e.waitTensorBoard(ctx, t, ns, tb.Name, phase(tensorstackv1beta1.TensorBoardFailed))
	if c := tbCondition(tb, "Ready"); c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "Container tensorboard") || !strings.Contains(c.Message, "CrashLoopBackOff") {
		t.Errorf("Ready %+v", c)
	}
	if tb.Status.Pod == nil || !ptr.Equal(&tb.Status.Pod.Phase, ptr.To(corev1.PodRunning)) {
		t.Errorf("pod %+v", tb.Status.Pod)
	}
}
