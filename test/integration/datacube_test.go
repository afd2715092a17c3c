package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/datacube"
	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
	"github.com/accelstack/accelstack/test/harness"
)

// s3Options are the seed's S3 options, the credentials as secret references.
func s3Options(uri string) []corev1.EnvVar {
	ref := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s3-config"}, Key: key}}
	}
	return []corev1.EnvVar{
		{Name: "s3-endpoint", ValueFrom: ref("endpoint")},
		{Name: "s3-access-key-id", ValueFrom: ref("accessKeyID")},
		{Name: "s3-secret-access-key", ValueFrom: ref("secretAccessKey")},
		{Name: "s3-uri", Value: uri},
	}
}

func waitDataCube(ctx context.Context, t *testing.T, c client.Client, key client.ObjectKey, what string, done func(*tensorstackv1beta1.DataCube) bool) *tensorstackv1beta1.DataCube {
	t.Helper()
	dc := &tensorstackv1beta1.DataCube{}
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, dc); err != nil {
			return false, err
		}
		return done(dc), nil
	})
	if err != nil {
		t.Fatalf("DataCube %s: never %s; status %+v: %v", key, what, dc.Status, err)
	}
	return dc
}

func condition(dc *tensorstackv1beta1.DataCube, t tensorstackv1beta1.DataCubeConditionType) *tensorstackv1beta1.DataCubeCondition {
	for i := range dc.Status.Conditions {
		if dc.Status.Conditions[i].Type == t {
			return &dc.Status.Conditions[i]
		}
	}
	return nil
}

func isTrue(dc *tensorstackv1beta1.DataCube, t tensorstackv1beta1.DataCubeConditionType) bool {
	c := condition(dc, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// jobPod waits for the Job controller of the real kube-controller-manager to
// create the DataCube's pod.
func jobPod(ctx context.Context, t *testing.T, c client.Client, ns, dcName string) *corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{datacube.NameLabelKey: dcName}); err != nil {
			return false, err
		}
		return len(pods.Items) > 0, nil
	})
	if err != nil {
		t.Fatalf("no pod for DataCube %s: %v", dcName, err)
	}
	return &pods.Items[0]
}

// setPodPhase plays the kubelet: envtest runs no kubelet.
func setPodPhase(ctx context.Context, t *testing.T, c client.Client, pod *corev1.Pod, phase corev1.PodPhase, terminated *corev1.ContainerStateTerminated) {
	t.Helper()
	pod.Status.Phase = phase
	state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	if terminated != nil {
		state = corev1.ContainerState{Terminated: terminated}
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "executor", Image: "executor", ImageID: "executor", State: state, Ready: phase == corev1.PodRunning}}
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatalf("setting pod %s to %s: %v", pod.Name, phase, err)
	}
}

// TestDataCubeDownload follows an S3 download into a PVC created from the
// template through the real Job controller: Job and env contract, then
// Initialized, Running, Complete and the executor's progress.
func TestDataCubeDownload(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t, harness.WithControllerManager())
	cp.StartControllers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := cp.Client
	harness.CreateNamespace(ctx, t, c, "dc")

	dc := &tensorstackv1beta1.DataCube{
		ObjectMeta: metav1.ObjectMeta{Namespace: "dc", Name: "s3-download"},
		Spec: tensorstackv1beta1.DataCubeSpec{
			Source: tensorstackv1beta1.DataReference{Type: "s3", Options: s3Options("s3://bucket/path/subpath")},
			Sink: tensorstackv1beta1.DataReference{Type: "pvc", PVC: &tensorstackv1beta1.PVCReference{
				Name: "datacube-pvc", SubPath: "dev/s3",
				Template: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Gi")}},
				}},
			}},
			Executor: tensorstackv1beta1.ExecutorReference{
				Options: tensorstackv1beta1.ExecutorOptions{Sync: true, BackoffLimit: ptr.To[int32](2), ActiveDeadlineSeconds: ptr.To[int64](3600), ExtraArgs: []string{"--concurrency", "8"}},
				Env:     []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "proxy:3128"}},
			},
		},
	}
	if err := c.Create(ctx, dc); err != nil {
		t.Fatal(err)
	}

	pod := jobPod(ctx, t, c, "dc", dc.Name)
	if !strings.HasPrefix(pod.Name, "s3-download-batchjob-") {
		t.Errorf("pod name %q, want s3-download-batchjob-xxxxx", pod.Name)
	}
	pvc := &corev1.PersistentVolumeClaim{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "dc", Name: "datacube-pvc"}, pvc); err != nil {
		t.Fatalf("PVC from the template: %v", err)
	}
	job := &batchv1.Job{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "dc", Name: "s3-download-batchjob"}, job); err != nil {
		t.Fatal(err)
	}
	if *job.Spec.BackoffLimit != 2 || *job.Spec.Template.Spec.ActiveDeadlineSeconds != 3600 {
		t.Errorf("Job backoffLimit %d, pod activeDeadlineSeconds %d; want 2 and 3600", *job.Spec.BackoffLimit, *job.Spec.Template.Spec.ActiveDeadlineSeconds)
	}
	ctr := job.Spec.Template.Spec.Containers[0]
	env := map[string]corev1.EnvVar{}
	for _, e := range ctr.Env {
		env[e.Name] = e
	}
	wantValues := map[string]string{
		"DATACUBE_SOURCE_TYPE": "s3", "DATACUBE_SINK_TYPE": "pvc", "DATACUBE_SINK_PVC_PATH": "/datacube/pvc/dev/s3",
		"DATACUBE_SYNC": "true", "DATACUBE_SOURCE_OPT_S3_URI": "s3://bucket/path/subpath", "HTTPS_PROXY": "proxy:3128",
	}
	for name, want := range wantValues {
		if env[name].Value != want {
			t.Errorf("env %s = %q, want %q", name, env[name].Value, want)
		}
	}
	if ref := env["DATACUBE_SOURCE_OPT_S3_SECRET_ACCESS_KEY"].ValueFrom; ref == nil || ref.SecretKeyRef.Name != "s3-config" || ref.SecretKeyRef.Key != "secretAccessKey" {
		t.Errorf("secret option = %+v, want a secretKeyRef to s3-config/secretAccessKey", env["DATACUBE_SOURCE_OPT_S3_SECRET_ACCESS_KEY"])
	}
	if diff := cmp.Diff([]string{"--concurrency", "8"}, ctr.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if want := "DATACUBE_SOURCE_OPT_S3_ACCESS_KEY_ID,DATACUBE_SOURCE_OPT_S3_ENDPOINT,DATACUBE_SOURCE_OPT_S3_SECRET_ACCESS_KEY"; env[executorenv.EnvSecretOptions].Value != want {
		t.Errorf("env %s = %q, want %q", executorenv.EnvSecretOptions, env[executorenv.EnvSecretOptions].Value, want)
	}
	if a := pod.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("pod automountServiceAccountToken = %v, want false", a)
	}
	if m := ctr.VolumeMounts[0]; m.MountPath != "/datacube/pvc" || m.ReadOnly {
		t.Errorf("volume mount %+v, want the PVC writable at /datacube/pvc", m)
	}

	setPodPhase(ctx, t, c, pod, corev1.PodRunning, nil)
	got := waitDataCube(ctx, t, c, client.ObjectKeyFromObject(dc), "Running", func(d *tensorstackv1beta1.DataCube) bool {
		return d.Status.Phase == tensorstackv1beta1.DataCubeRunning && isTrue(d, tensorstackv1beta1.DataCubeInitialized)
	})
	if got.Status.Pod == nil || got.Status.Pod.Reference.Name != pod.Name || condition(got, tensorstackv1beta1.DataCubeInitialized).Message != "The DataCube is initialized" {
		t.Errorf("status = %+v, want the pod and the Initialized message", got.Status)
	}

	setPodPhase(ctx, t, c, pod, corev1.PodSucceeded, &corev1.ContainerStateTerminated{
		ExitCode: 0, Reason: "Completed", FinishedAt: metav1.Now(),
		Message: `{"bytes":1048576,"files":12,"skipped":3,"deleted":1,"durationSeconds":2.5}`,
	})
	got = waitDataCube(ctx, t, c, client.ObjectKeyFromObject(dc), "Complete", func(d *tensorstackv1beta1.DataCube) bool {
		return isTrue(d, tensorstackv1beta1.DataCubeComplete)
	})
	wantProgress := &tensorstackv1beta1.TransferProgress{Bytes: 1048576, Files: 12, Skipped: 3, Deleted: 1, Duration: "2.500s"}
	if diff := cmp.Diff(wantProgress, got.Status.Progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if got.Status.Phase != tensorstackv1beta1.DataCubeSucceeded || got.Status.Pod.Status != "Completed" ||
		condition(got, tensorstackv1beta1.DataCubeComplete).Message != "The DataCube is complete" || isTrue(got, tensorstackv1beta1.DataCubeFailed) {
		t.Errorf("status = %+v, want Succeeded, Completed, Complete and not Failed", got.Status)
	}
}

// TestDataCubeFailure checks that an attempt that fails with no retries left
// fails the DataCube, and that an upload mounts its PVC read-only.
func TestDataCubeFailure(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t, harness.WithControllerManager())
	cp.StartControllers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := cp.Client
	harness.CreateNamespace(ctx, t, c, "dc")

	dc := &tensorstackv1beta1.DataCube{
		ObjectMeta: metav1.ObjectMeta{Namespace: "dc", Name: "s3-upload"},
		Spec: tensorstackv1beta1.DataCubeSpec{
			Source: tensorstackv1beta1.DataReference{Type: "pvc", PVC: &tensorstackv1beta1.PVCReference{Name: "data", SubPath: "out"}},
			Sink:   tensorstackv1beta1.DataReference{Type: "s3", Options: s3Options("s3://bucket/results")},
		},
	}
	if err := c.Create(ctx, dc); err != nil {
		t.Fatal(err)
	}
	pod := jobPod(ctx, t, c, "dc", dc.Name)
	if m := pod.Spec.Containers[0].VolumeMounts[0]; !m.ReadOnly {
		t.Errorf("upload mounts the PVC %+v, want read-only", m)
	}
	setPodPhase(ctx, t, c, pod, corev1.PodFailed, &corev1.ContainerStateTerminated{
		ExitCode: 1, Reason: "Error", FinishedAt: metav1.Now(), Message: `{"bytes":0,"files":0,"durationSeconds":0.1,"error":"access denied"}`,
	})
	got := waitDataCube(ctx, t, c, client.ObjectKeyFromObject(dc), "Failed", func(d *tensorstackv1beta1.DataCube) bool {
		return isTrue(d, tensorstackv1beta1.DataCubeFailed)
	})
	if got.Status.Phase != tensorstackv1beta1.DataCubeFailedPhase || isTrue(got, tensorstackv1beta1.DataCubeComplete) ||
		!strings.Contains(condition(got, tensorstackv1beta1.DataCubeFailed).Message, "The DataCube is failed") {
		t.Errorf("status = %+v, want Failed with the platform's message", got.Status)
	}
}

// TestDataCubeValidation checks the schema refuses specs it cannot run.
func TestDataCubeValidation(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pvcSide := func(sub string) tensorstackv1beta1.DataReference {
		return tensorstackv1beta1.DataReference{Type: "pvc", PVC: &tensorstackv1beta1.PVCReference{Name: "p", SubPath: sub}}
	}
	s3Side := tensorstackv1beta1.DataReference{Type: "s3", Options: s3Options("s3://b/p")}
	withArgs := func(args ...string) tensorstackv1beta1.DataCubeSpec {
		return tensorstackv1beta1.DataCubeSpec{Source: s3Side, Sink: pvcSide(""), Executor: tensorstackv1beta1.ExecutorReference{
			Options: tensorstackv1beta1.ExecutorOptions{ExtraArgs: args},
		}}
	}
	testCases := []struct {
		name    string
		objName string // GenerateName dc- when empty
		spec    tensorstackv1beta1.DataCubeSpec
		wantErr string
	}{
		{name: "name too long for the Job", objName: strings.Repeat("n", 55), spec: withArgs(), wantErr: "metadata.name must be at most 54 characters"},
		{name: "pvc-root flag", spec: withArgs("--pvc-root=/"), wantErr: "spec.executor.options.extraArgs: Invalid value"},
		{name: "pvc-root flag after an allowed one", spec: withArgs("--concurrency", "4", "-pvc-root", "/"), wantErr: "only the flags --concurrency"},
		{name: "end of flags", spec: withArgs("--", "x"), wantErr: "only the flags"},
		{name: "subPath traversal", spec: tensorstackv1beta1.DataCubeSpec{Source: s3Side, Sink: pvcSide("a/../../etc")}, wantErr: "subPath must be a relative path without .. segments"},
		{name: "absolute subPath", spec: tensorstackv1beta1.DataCubeSpec{Source: s3Side, Sink: pvcSide("/etc")}, wantErr: "subPath must be a relative path"},
		{name: "no pvc side", spec: tensorstackv1beta1.DataCubeSpec{Source: s3Side, Sink: s3Side}, wantErr: "one of spec.source and spec.sink must be of type pvc"},
		{name: "pvc type without pvc", spec: tensorstackv1beta1.DataCubeSpec{Source: s3Side, Sink: tensorstackv1beta1.DataReference{Type: "pvc"}}, wantErr: "pvc is required when type is pvc"},
		{name: "unknown type", spec: tensorstackv1beta1.DataCubeSpec{Source: tensorstackv1beta1.DataReference{Type: "ftp"}, Sink: pvcSide("")}, wantErr: "spec.source.type"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			meta := metav1.ObjectMeta{GenerateName: "dc-", Namespace: "default"}
			if tc.objName != "" {
				meta = metav1.ObjectMeta{Name: tc.objName, Namespace: "default"}
			}
			err := cp.Client.Create(ctx, &tensorstackv1beta1.DataCube{ObjectMeta: meta, Spec: tc.spec})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("create = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
	t.Run("accepted: allowed flags and a name of 54 characters", func(t *testing.T) {
		dc := &tensorstackv1beta1.DataCube{
			ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("n", 54), Namespace: "default"},
			Spec:       withArgs("--concurrency", "4", "--part-size=64Mi", "--no-fsync", "-v=2"),
		}
		if err := cp.Client.Create(ctx, dc); err != nil {
			t.Fatal(err)
		}
		t.Run("spec is immutable", func(t *testing.T) {
			dc.Spec.Executor.Options.Sync = true
			err := cp.Client.Update(ctx, dc)
			if err == nil || !strings.Contains(err.Error(), "spec is immutable") {
				t.Fatalf("update of spec.executor.options.sync = %v, want refused as immutable", err)
			}
		})
	})
}

// TestDataCubeUnrunnable checks that a DataCube the schema accepts but the
// API server refuses as a Job fails with InvalidSpec, in its status and a
// Warning event, instead of being retried without a word.
func TestDataCubeUnrunnable(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	cp.StartControllers(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := cp.Client
	harness.CreateNamespace(ctx, t, c, "dc")
	dc := &tensorstackv1beta1.DataCube{
		ObjectMeta: metav1.ObjectMeta{Namespace: "dc", Name: "bad-option"},
		Spec: tensorstackv1beta1.DataCubeSpec{
			// "=" cannot be in an environment variable's name.
			Source: tensorstackv1beta1.DataReference{Type: "s3", Options: append(s3Options("s3://b/p"), corev1.EnvVar{Name: "a=b", Value: "x"})},
			Sink:   tensorstackv1beta1.DataReference{Type: "pvc", PVC: &tensorstackv1beta1.PVCReference{Name: "data"}},
		},
	}
	if err := c.Create(ctx, dc); err != nil {
		t.Fatal(err)
	}
	got := waitDataCube(ctx, t, c, client.ObjectKeyFromObject(dc), "Failed", func(d *tensorstackv1beta1.DataCube) bool {
		return isTrue(d, tensorstackv1beta1.DataCubeFailed)
	})
	cond := condition(got, tensorstackv1beta1.DataCubeFailed)
	if cond.Reason != datacube.ReasonInvalidSpec || !strings.Contains(cond.Message, "DATACUBE_SOURCE_OPT_A=B") || got.Status.Phase != tensorstackv1beta1.DataCubeFailedPhase {
		t.Errorf("status = %+v, want Failed, reason %s, naming the variable", got.Status, datacube.ReasonInvalidSpec)
	}
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var events eventsv1.EventList
		if err := c.List(ctx, &events, client.InNamespace("dc")); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Regarding.Name == dc.Name && e.Type == corev1.EventTypeWarning && e.Reason == datacube.ReasonInvalidSpec {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("no Warning event %s: %v", datacube.ReasonInvalidSpec, err)
	}
}
