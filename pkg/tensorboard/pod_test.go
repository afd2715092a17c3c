package tensorboard

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/tensorboard/logdir"
)

// tensorBoard is a TensorBoard in namespace demo over spec.
func tensorBoard(spec tensorstackv1beta1.TensorBoardSpec) *tensorstackv1beta1.TensorBoard {
	return &tensorstackv1beta1.TensorBoard{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "tb"}, Spec: spec}
}

// mustPlan returns the plan of tb's spec.
func mustPlan(t *testing.T, tb *tensorstackv1beta1.TensorBoard) *logdir.Plan {
	t.Helper()
	p, errs := logdir.Build(&tb.Spec, specPath)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return p
}

// container returns the container name of pod.
func container(t *testing.T, pod corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	i := slices.IndexFunc(pod.Containers, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no container %s in %+v", name, pod.Containers)
	}
	return pod.Containers[i]
}

// hasMount reports whether c mounts m.
func hasMount(c corev1.Container, m corev1.VolumeMount) bool {
	return slices.ContainsFunc(c.VolumeMounts, func(got corev1.VolumeMount) bool { return cmp.Equal(got, m) })
}

func TestDeploymentOfPVCs(t *testing.T) {
	tb := tensorBoard(tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{"t9k://pvc/logs/run1"}})
	dep := workload(tb, mustPlan(t, tb), s3None, DefaultImage, "activity:v1").Deployment()

	if dep.Name != "tb-tensorboard" || dep.Namespace != "demo" || *dep.Spec.Replicas != 1 {
		t.Errorf("Deployment %s/%s replicas %d", dep.Namespace, dep.Name, *dep.Spec.Replicas)
	}
	if diff := cmp.Diff(map[string]string{LabelKey: "tb-tensorboard"}, dep.Spec.Selector.MatchLabels); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	pod := dep.Spec.Template.Spec
	tbc := container(t, pod, ContainerName)
	wantArgs := []string{
		"--logdir_spec=logs/run1:/t9k/logs/pvc/logs/run1",
		"--host=127.0.0.1", "--port=6006", "--path_prefix=/tensorboard/demo/tb",
	}
	if tbc.Image != DefaultImage || !cmp.Equal(tbc.Command, []string{"tensorboard"}) || !cmp.Equal(tbc.Args, wantArgs) {
		t.Errorf("container image %s command %v args %v", tbc.Image, tbc.Command, tbc.Args)
	}
	if diff := cmp.Diff(DefaultResources(), tbc.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if !hasMount(tbc, corev1.VolumeMount{Name: "pvc-0", MountPath: "/t9k/logs/pvc/logs", ReadOnly: true}) {
		t.Errorf("mounts %+v", tbc.VolumeMounts)
	}
	if i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == "pvc-0" }); i < 0 ||
		pod.Volumes[i].PersistentVolumeClaim == nil || pod.Volumes[i].PersistentVolumeClaim.ClaimName != "logs" || !pod.Volumes[i].PersistentVolumeClaim.ReadOnly {
		t.Errorf("volumes %+v", pod.Volumes)
	}
	side := container(t, pod, activity.ContainerName)
	if side.Image != "activity:v1" || !cmp.Equal(side.Args, []string{"--upstream=http://127.0.0.1:6006", "--access-token-file=/var/run/t9k/access/token"}) {
		t.Errorf("sidecar image %s args %v", side.Image, side.Args)
	}
	if pod.SchedulerName != "" || ptr.Deref(pod.AutomountServiceAccountToken, true) {
		t.Errorf("scheduler %q token %v", pod.SchedulerName, pod.AutomountServiceAccountToken)
	}

	svc := workload(tb, mustPlan(t, tb), s3None, DefaultImage, "activity:v1").Service()
	if svc.Name != dep.Name || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.String() != activity.HTTPPortName {
		t.Errorf("Service %s ports %+v", svc.Name, svc.Spec.Ports)
	}
}

func TestDeploymentOptions(t *testing.T) {
	res := corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}
	tb := tensorBoard(tensorstackv1beta1.TensorBoardSpec{
		TrainingLogFilesets: []string{"t9k://pvc/logs/run1"},
		Image:               "example.com/tb:1",
		Suspend:             true,
		Resources:           &res,
		Scheduler:           &tensorstackv1beta1.SchedulePolicy{T9kScheduler: &tensorstackv1beta1.T9kScheduler{Queue: "q1"}},
	})
	dep := workload(tb, mustPlan(t, tb), s3None, DefaultImage, "activity:v1").Deployment()
	if *dep.Spec.Replicas != 0 {
		t.Errorf("suspended replicas %d", *dep.Spec.Replicas)
	}
	pod := dep.Spec.Template
	if pod.Spec.SchedulerName != schedulerv1beta1.SchedulerName || pod.Labels[schedulerv1beta1.QueueLabel] != "q1" {
		t.Errorf("scheduler %q labels %v", pod.Spec.SchedulerName, pod.Labels)
	}
	if dep.Spec.Selector.MatchLabels[schedulerv1beta1.QueueLabel] != "" {
		t.Error("the queue is in the selector")
	}
	tbc := container(t, pod.Spec, ContainerName)
	if tbc.Image != "example.com/tb:1" || !cmp.Equal(tbc.Resources, res) {
		t.Errorf("image %s resources %+v", tbc.Image, tbc.Resources)
	}
}

// TestDeploymentS3Env: an S3-env Secret reaches TensorBoard as
// secretKeyRef variables only.
func TestDeploymentS3Env(t *testing.T) {
	tb := tensorBoard(tensorstackv1beta1.TensorBoardSpec{LogDir: &tensorstackv1beta1.TensorBoardDataSource{
		S3: &tensorstackv1beta1.S3DataSource{SecretRef: tensorstackv1beta1.SecretRef{Name: "creds"}, URI: []string{"s3://bucket/run"}},
	}})
	pod := workload(tb, mustPlan(t, tb), s3Env, DefaultImage, "a").Deployment().Spec.Template.Spec
	tbc := container(t, pod, ContainerName)
	if !cmp.Equal(tbc.Command, []string{"sh", "-c", s3Prelude, "s3-env"}) || tbc.Args[0] != "tensorboard" || tbc.Args[1] != "--logdir_spec=bucket/run:s3://bucket/run" {
		t.Errorf("command %q args %q", tbc.Command, tbc.Args)
	}
	want := map[string]string{
		"AWS_ACCESS_KEY_ID": "accessKeyID", "AWS_SECRET_ACCESS_KEY": "secretAccessKey", "S3_ENDPOINT": "endpoint", "AWS_REGION": "region",
	}
	for _, e := range tbc.Env {
		key, ok := want[e.Name]
		if !ok {
			continue
		}
		delete(want, e.Name)
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "creds" || e.ValueFrom.SecretKeyRef.Key != key {
			t.Errorf("env %+v, want a secretKeyRef to creds/%s", e, key)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing env %v", want)
	}
}

// TestDeploymentS3Cfg: an S3-cfg Secret is mounted read-only for the
// prelude; no value is in the spec.
func TestDeploymentS3Cfg(t *testing.T) {
	tb := tensorBoard(tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{"t9k://minio/creds/bucket/run"}})
	pod := workload(tb, mustPlan(t, tb), s3Cfg, DefaultImage, "a").Deployment().Spec.Template.Spec
	tbc := container(t, pod, ContainerName)
	if tbc.Command[0] != "sh" || !hasMount(tbc, corev1.VolumeMount{Name: s3CfgVolume, MountPath: S3CfgDir, ReadOnly: true}) {
		t.Errorf("command %q mounts %+v", tbc.Command, tbc.VolumeMounts)
	}
	for _, e := range tbc.Env {
		if strings.HasPrefix(e.Name, "AWS_") || strings.HasPrefix(e.Name, "S3_") {
			t.Errorf("env %+v in the spec", e)
		}
	}
	i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == s3CfgVolume })
	if i < 0 || pod.Volumes[i].Secret == nil || pod.Volumes[i].Secret.SecretName != "creds" {
		t.Errorf("volumes %+v", pod.Volumes)
	}
}

// TestDeploymentHTTP: files of logDir.http are downloaded by an init
// container into a volume TensorBoard reads.
func TestDeploymentHTTP(t *testing.T) {
	tb := tensorBoard(tensorstackv1beta1.TensorBoardSpec{LogDir: &tensorstackv1beta1.TensorBoardDataSource{
		HTTP: &tensorstackv1beta1.HTTPDataSource{URL: []string{"https://example.com/a/events.1", "http://example.com/b/events.2"}},
	}})
	pod := workload(tb, mustPlan(t, tb), s3None, DefaultImage, "a").Deployment().Spec.Template.Spec
	if len(pod.InitContainers) != 1 {
		t.Fatalf("init containers %+v", pod.InitContainers)
	}
	dl := pod.InitContainers[0]
	want := []string{"python3", "-c", downloadScript,
		"/t9k/logs/http/0", "https://example.com/a/events.1", "events.1",
		"/t9k/logs/http/1", "http://example.com/b/events.2", "events.2"}
	if dl.Name != DownloaderName || !cmp.Equal(dl.Command, want) {
		t.Errorf("downloader %s command %q", dl.Name, dl.Command)
	}
	tbc := container(t, pod, ContainerName)
	if tbc.Args[0] != "--logdir_spec=http/0:/t9k/logs/http/0,http/1:/t9k/logs/http/1" {
		t.Errorf("args %q", tbc.Args)
	}
}

// TestS3Prelude runs the prelude with sh over an .s3cfg and an S3-env
// environment, and checks what it hands the command.
func TestS3Prelude(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	script := strings.Replace(s3Prelude, S3CfgDir, dir, 1)
	run := func(env ...string) map[string]string {
		t.Helper()
		cmd := exec.Command(sh, "-c", script, "s3-env", "env")
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		got := map[string]string{}
		for _, line := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && (strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "S3_")) {
				got[k] = v
			}
		}
		return got
	}

	got := run("AWS_ACCESS_KEY_ID=id", "AWS_SECRET_ACCESS_KEY=key", "S3_ENDPOINT=http://minio:9000")
	want := map[string]string{
		"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "key", "AWS_REGION": "us-east-1",
		"S3_ENDPOINT": "http://minio:9000", "AWS_ENDPOINT_URL": "http://minio:9000", "S3_USE_HTTPS": "0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("S3-env (-want +got):\n%s", diff)
	}

	cfg := "[default]\naccess_key = AK\nsecret_key=S K/+= \nhost_base = minio.example.com:9000\nuse_https = False\nbucket_location = EU\n"
	if err := os.WriteFile(filepath.Join(dir, ".s3cfg"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	got = run()
	want = map[string]string{
		"AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "S K/+=", "AWS_REGION": "eu-west-1",
		"S3_ENDPOINT": "http://minio.example.com:9000", "AWS_ENDPOINT_URL": "http://minio.example.com:9000", "S3_USE_HTTPS": "0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("S3-cfg (-want +got):\n%s", diff)
	}
}

func TestURL(t *testing.T) {
	if got := URL("", "demo", "tb"); got != "http://tb-tensorboard.demo.svc.cluster.local/tensorboard/demo/tb/" {
		t.Errorf("got %s", got)
	}
}
